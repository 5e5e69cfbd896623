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
	mem   map[string]Lines
	spans int // held in mem
}

// memSpans bounds the spans a Cache holds in memory (16 bytes each).
const memSpans = 4 << 20

// NewCache returns a cache keeping footprints under dir too (never a
// trace's own directory); "" keeps them in memory only.
func NewCache(dir string) *Cache { return &Cache{dir: dir, mem: map[string]Lines{}} }

// Footprint is [Footprint] of the trace at path, from the cache when it
// holds it.
func (c *Cache) Footprint(path string) (Lines, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
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
		if l, err := readLines(file); err == nil {
			c.keep(key, l)
			return l, nil
		}
	}
	l, err = Footprint(path)
	if err != nil {
		return nil, err
	}
	c.keep(key, l)
	if file != "" {
		_ = writeLines(file, l) // a cache that cannot be written is only slower
	}
	return l, nil
}

func (c *Cache) keep(key string, l Lines) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spans+len(l) > memSpans {
		clear(c.mem) // crude, and enough: footprints are read in list order, once a segment
		c.spans = 0
	}
	if len(l) <= memSpans {
		c.mem[key] = l
		c.spans += len(l)
	}
}

// The cache file: "L2WARM1\n", then per span uvarint(lo − previous hi),
// uvarint(hi − lo).
const magic = "L2WARM1\n"

func writeLines(file string, l Lines) error {
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
	prev := uint64(0)
	for _, s := range l {
		n := binary.PutUvarint(buf[:], s.Lo-prev)
		n += binary.PutUvarint(buf[n:], s.Hi-s.Lo)
		w.Write(buf[:n])
		prev = s.Hi
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

func readLines(file string) (Lines, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		return nil, errors.New("not a footprint file")
	}
	l := Lines{}
	prev := uint64(0)
	for {
		gap, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return nil, err
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		lo := prev + gap
		l = append(l, Span{lo, lo + n})
		prev = lo + n
	}
}
