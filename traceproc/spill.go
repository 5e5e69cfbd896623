package traceproc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A record in a partition: u64 key, u32 payload length, payload.
const recHeader = 12

// part holds the records whose keys fall in [lo, hi): first those flushed
// to its spill file (created on first flush), then those still in buf.
type part struct {
	lo, hi uint64
	buf    []byte
	bufCap int
	f      *os.File
	fsize  int64
	dir    string
}

// size returns the bytes of records the part holds.
func (p *part) size() int64 { return p.fsize + int64(len(p.buf)) }

func (p *part) add(key uint64, payload []byte) error {
	if len(p.buf)+recHeader+len(payload) > p.bufCap && len(p.buf) > 0 {
		if err := p.flush(); err != nil {
			return err
		}
	}
	p.buf = binary.LittleEndian.AppendUint64(p.buf, key)
	p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(len(payload)))
	p.buf = append(p.buf, payload...)
	return nil
}

func (p *part) flush() error {
	if p.f == nil {
		f, err := os.CreateTemp(p.dir, "part-*")
		if err != nil {
			return fmt.Errorf("create spill file: %w", err)
		}
		p.f = f
	}
	n, err := p.f.Write(p.buf)
	p.fsize += int64(n)
	if err != nil {
		return fmt.Errorf("write %s: %w", p.f.Name(), err)
	}
	p.buf = p.buf[:0]
	return nil
}

// load returns all the part's records in one slice (reusing dst).
func (p *part) load(dst []byte) ([]byte, error) {
	n := int(p.size())
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if p.f != nil {
		if _, err := p.f.ReadAt(dst[:p.fsize], 0); err != nil {
			return nil, fmt.Errorf("read %s: %w", p.f.Name(), err)
		}
	}
	copy(dst[p.fsize:], p.buf)
	return dst, nil
}

// scan calls fn for each record in order, streaming the spill file.
func (p *part) scan(fn func(key uint64, payload []byte) error) error {
	if p.f != nil {
		br := bufio.NewReaderSize(io.NewSectionReader(p.f, 0, p.fsize), 1<<20)
		var hdr [recHeader]byte
		var payload []byte
		for {
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("read %s: %w", p.f.Name(), err)
			}
			n := binary.LittleEndian.Uint32(hdr[8:])
			if cap(payload) < int(n) {
				payload = make([]byte, n)
			}
			payload = payload[:n]
			if _, err := io.ReadFull(br, payload); err != nil {
				return fmt.Errorf("read %s: %w", p.f.Name(), err)
			}
			if err := fn(binary.LittleEndian.Uint64(hdr[:]), payload); err != nil {
				return err
			}
		}
	}
	return eachRecord(p.buf, fn)
}

// release closes and removes the spill file and drops the buffer.
func (p *part) release() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.f.Name())
		p.f = nil
	}
	p.buf, p.fsize = nil, 0
}

// eachRecord calls fn for each record of an in-memory run of records.
func eachRecord(b []byte, fn func(key uint64, payload []byte) error) error {
	for len(b) >= recHeader {
		key := binary.LittleEndian.Uint64(b)
		n := int(binary.LittleEndian.Uint32(b[8:]))
		if len(b) < recHeader+n {
			return errors.New("spill: truncated record")
		}
		if err := fn(key, b[recHeader:recHeader+n]); err != nil {
			return err
		}
		b = b[recHeader+n:]
	}
	if len(b) != 0 {
		return errors.New("spill: truncated record")
	}
	return nil
}

// partSet spreads records over partitions of consecutive key ranges, so
// that reading the partitions in order visits keys in increasing order.
type partSet struct {
	lo, step uint64
	parts    []*part
}

// newPartSet divides [lo, hi) into at most n partitions, each buffering up
// to bufCap bytes in memory before it appends them to its spill file in dir.
func newPartSet(dir string, lo, hi uint64, n, bufCap int) *partSet {
	span := hi - lo
	if uint64(n) > span {
		n = int(span)
	}
	n = max(n, 1)
	step := (span + uint64(n) - 1) / uint64(n)
	s := &partSet{lo: lo, step: step}
	for k := lo; k < hi; k += step {
		s.parts = append(s.parts, &part{lo: k, hi: min(k+step, hi), bufCap: bufCap, dir: dir})
	}
	return s
}

func (s *partSet) add(key uint64, payload []byte) error {
	return s.parts[(key-s.lo)/s.step].add(key, payload)
}

// settle writes to disk the buffers of partitions that already spilled, so
// that only partitions small enough to never spill stay in memory.
func (s *partSet) settle() error {
	for _, p := range s.parts {
		if p.f != nil && len(p.buf) > 0 {
			if err := p.flush(); err != nil {
				return err
			}
		}
		if p.f != nil {
			p.buf = nil
		}
	}
	return nil
}

func (s *partSet) release() {
	for _, p := range s.parts {
		p.release()
	}
}
