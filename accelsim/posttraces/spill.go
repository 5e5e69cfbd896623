package posttraces

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
	fl     *flusher // nil: flush synchronously
}

// size returns the bytes of records the part holds.
func (p *part) size() int64 { return p.fsize + int64(len(p.buf)) }

func (p *part) add(key uint64, payload []byte) error {
	if len(p.buf)+recHeader+len(payload) > p.bufCap && len(p.buf) > 0 {
		if p.fl != nil {
			if err := p.fl.submit(p); err != nil {
				return err
			}
		} else if err := p.flush(); err != nil {
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
	fl       *flusher
}

// newPartSet divides [lo, hi) into at most n partitions, each buffering up
// to bufCap bytes in memory before it appends them to its spill file in dir.
// With async, full buffers are written by a background goroutine, so that
// reading the trace and writing the spill files use two cores; [partSet.settle]
// (or [partSet.release]) stops it.
func newPartSet(dir string, lo, hi uint64, n, bufCap int, async bool) *partSet {
	span := hi - lo
	if uint64(n) > span {
		n = int(span)
	}
	n = max(n, 1)
	step := (span + uint64(n) - 1) / uint64(n)
	s := &partSet{lo: lo, step: step}
	if async {
		s.fl = newFlusher()
	}
	for k := lo; k < hi; k += step {
		s.parts = append(s.parts, &part{lo: k, hi: min(k+step, hi), bufCap: bufCap, dir: dir, fl: s.fl})
	}
	return s
}

func (s *partSet) add(key uint64, payload []byte) error {
	return s.parts[(key-s.lo)/s.step].add(key, payload)
}

// settle writes to disk the buffers of partitions that already spilled, so
// that only partitions small enough to never spill stay in memory.
func (s *partSet) settle() error {
	if err := s.stopFlusher(); err != nil {
		return err
	}
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
	s.stopFlusher()
	for _, p := range s.parts {
		p.release()
	}
}

func (s *partSet) stopFlusher() error {
	if s.fl == nil {
		return nil
	}
	err := s.fl.stop()
	for _, p := range s.parts {
		p.fl = nil
	}
	s.fl = nil
	return err
}

// flusher writes full partition buffers in the background, in submission
// order. A few spare buffers circulate so the reader rarely allocates.
type flusher struct {
	jobs chan flushJob
	free chan []byte
	done chan struct{}
	err  error // set by the goroutine; read after done
}

type flushJob struct {
	p   *part
	buf []byte
}

func newFlusher() *flusher {
	f := &flusher{jobs: make(chan flushJob, 8), free: make(chan []byte, 10), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *flusher) run() {
	defer close(f.done)
	for j := range f.jobs {
		if f.err == nil {
			p := j.p
			if p.f == nil {
				file, err := os.CreateTemp(p.dir, "part-*")
				if err != nil {
					f.err = fmt.Errorf("create spill file: %w", err)
				}
				p.f = file
			}
			if f.err == nil {
				n, err := p.f.Write(j.buf)
				p.fsize += int64(n)
				if err != nil {
					f.err = fmt.Errorf("write %s: %w", p.f.Name(), err)
				}
			}
		}
		select {
		case f.free <- j.buf[:0]:
		default:
		}
	}
}

// submit hands p's full buffer to the goroutine and gives p a spare one.
func (f *flusher) submit(p *part) error {
	select {
	case <-f.done:
		return f.err
	default:
	}
	f.jobs <- flushJob{p: p, buf: p.buf}
	select {
	case b := <-f.free:
		p.buf = b
	default:
		p.buf = make([]byte, 0, p.bufCap)
	}
	return nil
}

// stop waits for every submitted buffer to be written.
func (f *flusher) stop() error {
	close(f.jobs)
	<-f.done
	return f.err
}
