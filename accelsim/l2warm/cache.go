package l2warm

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Cache keeps kernel traces' footprints: in memory (up to a number of
// spans) and, when it has a directory, on disk, so a later segment of the
// same trace, or one after a restart, does not read the traces again. A
// footprint is keyed by the trace's path, size and modification time. Its
// methods are safe for concurrent use.
type Cache struct {
	dir string // "" for memory only

	mu    sync.Mutex
	mem   map[string]Print
	spans int // held in mem
}

// memSpans bounds the spans a Cache holds in memory (16 bytes each).
const memSpans = 4 << 20

// NewCache returns a cache keeping footprints under dir too (never a
// trace's own directory); "" keeps them in memory only.
func NewCache(dir string) *Cache { return &Cache{dir: dir, mem: map[string]Print{}} }

// Footprint is [Footprint] of the trace at path, from the cache when it
// holds it.
func (c *Cache) Footprint(path string) (Print, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Print{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Print{}, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", abs, st.Size(), st.ModTime().UnixNano())
	c.mu.Lock()
	l, ok := c.mem[key]
	c.mu.Unlock()
	if ok {
		return l, nil
	}
	file := ""
	if c.dir != "" {
		sum := sha256.Sum256([]byte(key))
		file = filepath.Join(c.dir, hex.EncodeToString(sum[:12])+".lines")
		if l, err := readPrint(file); err == nil {
			c.keep(key, l)
			return l, nil
		}
	}
	l, err = Footprint(path)
	if err != nil {
		return Print{}, err
	}
	c.keep(key, l)
	if file != "" {
		_ = writePrint(file, l) // a cache that cannot be written is only slower
	}
	return l, nil
}

func (c *Cache) keep(key string, l Print) {
	n := len(l.Touched) + len(l.Written)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spans+n > memSpans {
		clear(c.mem) // crude, and enough: footprints are read in list order, once a segment
		c.spans = 0
	}
	if n <= memSpans {
		c.mem[key] = l
		c.spans += n
	}
}

// The cache file: "L2WARM2\n", then the touched lines and the written
// ones, each as uvarint(count of spans) and per span uvarint(lo −
// previous hi), uvarint(hi − lo).
const magic = "L2WARM2\n"

func writePrint(file string, p Print) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".lines*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	w.WriteString(magic)
	var buf [2 * binary.MaxVarintLen64]byte
	for _, l := range []Lines{p.Touched, p.Written} {
		w.Write(binary.AppendUvarint(nil, uint64(len(l))))
		prev := uint64(0)
		for _, s := range l {
			n := binary.PutUvarint(buf[:], s.Lo-prev)
			n += binary.PutUvarint(buf[n:], s.Hi-s.Lo)
			w.Write(buf[:n])
			prev = s.Hi
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

func readPrint(file string) (Print, error) {
	f, err := os.Open(file)
	if err != nil {
		return Print{}, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		return Print{}, errors.New("not a footprint file")
	}
	var p Print
	for _, l := range []*Lines{&p.Touched, &p.Written} {
		count, err := binary.ReadUvarint(r)
		if err != nil {
			return Print{}, err
		}
		*l = make(Lines, 0, min(count, 1<<20))
		prev := uint64(0)
		for range count {
			gap, err := binary.ReadUvarint(r)
			if err != nil {
				return Print{}, err
			}
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return Print{}, err
			}
			lo := prev + gap
			*l = append(*l, Span{lo, lo + n})
			prev = lo + n
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return Print{}, errors.New("footprint file: bytes after its spans")
	}
	return p, nil
}
