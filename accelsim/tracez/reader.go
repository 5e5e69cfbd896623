package tracez

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// Block is one thread block of the footer.
type Block struct {
	BlockHeader
	Warps []Warp
}

// Warp is one warp's footer entry.
type Warp struct {
	Insts     uint32
	Offset    uint64   // offset of the warp's record in the data section
	Subchunks []uint32 // instructions per frame
}

// Reader reads a .tracez file. Open loads the header and the footer; the
// instructions are decoded on demand by [Reader.Insts]. A Reader is not safe
// for concurrent use.
type Reader struct {
	f             *os.File
	path          string
	size          int64
	Header        []byte // the text header, without its NUL
	SubchunkInsts uint32
	Dict          []byte
	Blocks        []Block
	dec           *zstd.Decoder
	buf, out      []byte
}

// Open opens a .tracez file and reads its header and footer.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r := &Reader{f: f, path: path}
	if err := r.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.dec != nil {
		r.dec.Close()
	}
	return r.f.Close()
}

func (r *Reader) load() error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	r.size = size
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, size), 64<<10)
	hdr, err := br.ReadBytes(0)
	if err != nil {
		return fmt.Errorf("header: no NUL terminator: %w", err)
	}
	r.Header = hdr[:len(hdr)-1]
	var fixed [8]byte
	if _, err := io.ReadFull(br, fixed[:]); err != nil {
		return fmt.Errorf("dictionary fields: %w", err)
	}
	dictSize := binary.LittleEndian.Uint32(fixed[0:])
	r.SubchunkInsts = binary.LittleEndian.Uint32(fixed[4:])
	if int64(dictSize) > size {
		return fmt.Errorf("dict_size %d exceeds file size %d", dictSize, size)
	}
	r.Dict = make([]byte, dictSize)
	if _, err := io.ReadFull(br, r.Dict); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1)}
	if dictSize > 0 {
		opts = append(opts, zstd.WithDecoderDicts(r.Dict))
	}
	if r.dec, err = zstd.NewReader(nil, opts...); err != nil {
		return fmt.Errorf("zstd decoder: %w", err)
	}

	if size < 8 {
		return errors.New("file too short for an index offset")
	}
	var tail [8]byte
	if _, err := r.f.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("index offset: %w", err)
	}
	index := binary.LittleEndian.Uint64(tail[:])
	if index > uint64(size-8) {
		return fmt.Errorf("index offset %d beyond file size %d", index, size)
	}
	footer := size - 8 - int64(index) // bytes of footer: counts in it cannot claim more
	fr := bufio.NewReaderSize(io.NewSectionReader(r.f, int64(index), footer), 256<<10)
	u32 := func() (uint32, error) {
		var b [4]byte
		_, err := io.ReadFull(fr, b[:])
		return binary.LittleEndian.Uint32(b[:]), err
	}
	numTBs, err := u32()
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	for i := uint32(0); i < numTBs; i++ {
		var v [11]uint32
		for j := range v {
			if v[j], err = u32(); err != nil {
				return fmt.Errorf("footer block %d: %w", i, err)
			}
		}
		b := Block{BlockHeader: BlockHeader{
			TB: [3]uint32{v[0], v[1], v[2]}, ClusterID: [3]uint32{v[3], v[4], v[5]},
			ClusterCTA: [3]uint32{v[6], v[7], v[8]}, Rank: v[9]}}
		if int64(v[10])*16 > footer {
			return fmt.Errorf("footer block %d: %d warps do not fit in a footer of %d bytes", i, v[10], footer)
		}
		b.Warps = make([]Warp, v[10])
		for j := range b.Warps {
			var e [16]byte
			if _, err := io.ReadFull(fr, e[:]); err != nil {
				return fmt.Errorf("footer block %d warp %d: %w", i, j, err)
			}
			w := Warp{Insts: binary.LittleEndian.Uint32(e[0:]), Offset: binary.LittleEndian.Uint64(e[8:])}
			nsub := binary.LittleEndian.Uint32(e[4:])
			if nsub > w.Insts {
				return fmt.Errorf("footer block %d warp %d: %d subchunks for %d instructions", i, j, nsub, w.Insts)
			}
			if int64(nsub)*4 > footer {
				return fmt.Errorf("footer block %d warp %d: %d subchunks do not fit in a footer of %d bytes", i, j, nsub, footer)
			}
			w.Subchunks = make([]uint32, nsub)
			for k := range w.Subchunks {
				if w.Subchunks[k], err = u32(); err != nil {
					return fmt.Errorf("footer block %d warp %d: %w", i, j, err)
				}
			}
			b.Warps[j] = w
		}
		r.Blocks = append(r.Blocks, b)
	}
	return nil
}

// TotalInsts returns the number of instructions of all warps, from the footer.
func (r *Reader) TotalInsts() uint64 {
	var n uint64
	for _, b := range r.Blocks {
		for _, w := range b.Warps {
			n += uint64(w.Insts)
		}
	}
	return n
}

// Insts decodes warp w and calls fn with each instruction line (without
// '\n'); the slice is valid only during the call.
func (r *Reader) Insts(w Warp, fn func(line []byte) error) error {
	var hdr [8]byte
	if _, err := r.f.ReadAt(hdr[:], int64(w.Offset)); err != nil {
		return fmt.Errorf("read %s at %d: %w", r.path, w.Offset, err)
	}
	n, nsub := binary.LittleEndian.Uint32(hdr[0:]), binary.LittleEndian.Uint32(hdr[4:])
	if n != w.Insts || int(nsub) != len(w.Subchunks) {
		return fmt.Errorf("read %s at %d: warp record says %d insts in %d frames, footer %d in %d",
			r.path, w.Offset, n, nsub, w.Insts, len(w.Subchunks))
	}
	off := int64(w.Offset) + 8
	for k := uint32(0); k < nsub; k++ {
		var sz [4]byte
		if _, err := r.f.ReadAt(sz[:], off); err != nil {
			return fmt.Errorf("read %s at %d: %w", r.path, off, err)
		}
		csize := binary.LittleEndian.Uint32(sz[:])
		off += 4
		if int64(csize) > r.size-off {
			return fmt.Errorf("read %s at %d: frame of %d bytes runs past the end of the file", r.path, off-4, csize)
		}
		if cap(r.buf) < int(csize) {
			r.buf = make([]byte, csize)
		}
		r.buf = r.buf[:csize]
		if _, err := r.f.ReadAt(r.buf, off); err != nil {
			return fmt.Errorf("read %s at %d: %w", r.path, off, err)
		}
		off += int64(csize)
		var err error
		if r.out, err = r.dec.DecodeAll(r.buf, r.out[:0]); err != nil {
			return fmt.Errorf("read %s: frame at %d: %w", r.path, off-int64(csize), err)
		}
		got := uint32(0)
		for line := range bytes.SplitSeq(r.out, []byte{'\n'}) {
			got++
			if err := fn(line); err != nil {
				return err
			}
		}
		if got != w.Subchunks[k] {
			return fmt.Errorf("read %s: frame at %d holds %d lines, footer says %d", r.path, off-int64(csize), got, w.Subchunks[k])
		}
	}
	return nil
}

// CountInsts returns the number of instructions in the .tracez file at
// path, from its footer alone.
func CountInsts(path string) (uint64, error) {
	r, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.TotalInsts(), nil
}
