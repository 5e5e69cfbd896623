package posttraces

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/ulikunitz/xz"
)

// emitter writes one kernel's output. Warps arrive in order within a block,
// blocks in linear order; a payload was made by the matching encodeWarp.
type emitter interface {
	beginBlock(h tracez.BlockHeader) error
	warp(w, n uint64, payload []byte) error
	beginWarp(w, n uint64) error // a warp streamed line by line
	line(l []byte) error
	endWarp() error
	endBlock() error
	close() error
}

// encodeWarp appends one warp's kept lines in the output's form: zstd
// frames for .tracez, the lines themselves for text.
func (p *processor) encodeWarp(dst, scratch []byte, lines [][]byte) ([]byte, []byte) {
	if p.text {
		for _, l := range lines {
			dst = append(append(dst, l...), '\n')
		}
		return dst, scratch
	}
	return p.enc.AppendWarp(dst, scratch, lines)
}

// tracezEmitter writes the binary format.
type tracezEmitter struct {
	w       *tracez.Writer
	enc     *tracez.Encoder
	pending [][]byte // lines of the streamed warp's current subchunk
	arena   []byte
	frame   []byte
	scratch []byte
}

func newTracezEmitter(w io.Writer, header []byte, enc *tracez.Encoder, spillDir string) (*tracezEmitter, error) {
	tw, err := tracez.NewWriter(w, header, enc.SubchunkInsts(), spillDir)
	if err != nil {
		return nil, err
	}
	return &tracezEmitter{w: tw, enc: enc}, nil
}

func (e *tracezEmitter) beginBlock(h tracez.BlockHeader) error { return e.w.BeginBlock(h) }
func (e *tracezEmitter) endBlock() error                       { return e.w.EndBlock() }
func (e *tracezEmitter) warp(_, n uint64, payload []byte) error {
	return e.w.WriteWarp(n, payload)
}
func (e *tracezEmitter) beginWarp(_, n uint64) error { return e.w.BeginWarp(n) }

func (e *tracezEmitter) line(l []byte) error {
	if len(e.arena) > 0 {
		e.arena = append(e.arena, '\n')
	}
	e.arena = append(e.arena, l...)
	e.pending = append(e.pending, nil)
	if len(e.pending) == e.enc.SubchunkInsts() {
		e.flushFrame()
	}
	return nil
}

func (e *tracezEmitter) flushFrame() {
	if len(e.pending) == 0 {
		return
	}
	e.frame = e.enc.AppendFrame(e.frame[:0], e.arena)
	e.w.WriteFrame(e.frame)
	e.pending, e.arena = e.pending[:0], e.arena[:0]
}

func (e *tracezEmitter) endWarp() error {
	e.flushFrame()
	return e.w.EndWarp()
}

func (e *tracezEmitter) close() error { return e.w.Close() }

// textEmitter writes .traceg text, as Accel-Sim's post-processor does.
type textEmitter struct {
	w       *bufio.Writer
	cluster bool
	num     []byte
}

func newTextEmitter(w io.Writer, header []byte, cluster bool) *textEmitter {
	e := &textEmitter{w: bufio.NewWriterSize(w, 1<<20), cluster: cluster}
	e.w.Write(header)
	return e
}

func (e *textEmitter) u(v uint64) {
	e.num = strconv.AppendUint(e.num[:0], v, 10)
	e.w.Write(e.num)
}

func (e *textEmitter) triple(label string, v [3]uint32) {
	e.w.WriteString(label)
	for i, x := range v {
		if i > 0 {
			e.w.WriteByte(',')
		}
		e.u(uint64(x))
	}
	e.w.WriteByte('\n')
}

func (e *textEmitter) beginBlock(h tracez.BlockHeader) error {
	e.w.WriteString("\n#BEGIN_TB\n\n")
	e.triple("thread block = ", h.TB)
	if e.cluster {
		e.triple("cluster id = ", h.ClusterID)
		e.triple("cluster cta = ", h.ClusterCTA)
		e.w.WriteString("cluster rank = ")
		e.u(uint64(h.Rank))
		e.w.WriteByte('\n')
	}
	return nil
}

func (e *textEmitter) beginWarp(w, n uint64) error {
	e.w.WriteString("\nwarp = ")
	e.u(w)
	e.w.WriteString("\ninsts = ")
	e.u(n)
	e.w.WriteByte('\n')
	return nil
}

func (e *textEmitter) warp(w, n uint64, payload []byte) error {
	e.beginWarp(w, n)
	_, err := e.w.Write(payload)
	return err
}

func (e *textEmitter) line(l []byte) error {
	e.w.Write(l)
	return e.w.WriteByte('\n')
}

func (e *textEmitter) endWarp() error { return nil }

func (e *textEmitter) endBlock() error {
	_, err := e.w.WriteString("\n#END_TB\n")
	return err
}

func (e *textEmitter) close() error { return e.w.Flush() }

// xzSink compresses what is written to it into f, through `xz -1 -T0`
// when xzBin is set (as Accel-Sim does), else with the pure-Go codec.
type xzSink struct {
	io.Writer
	closeFn func() error
}

func newXZSink(f *os.File, xzBin string) (*xzSink, error) {
	if xzBin != "" {
		cmd := exec.Command(xzBin, "-1", "-T0", "-c")
		cmd.Stdout = f
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", xzBin, err)
		}
		return &xzSink{Writer: in, closeFn: func() error {
			in.Close()
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("xz -1 -T0: %w: %s", err, strings.TrimSpace(stderr.String()))
			}
			return nil
		}}, nil
	}
	zw, err := xz.NewWriter(f)
	if err != nil {
		return nil, fmt.Errorf("xz writer: %w", err)
	}
	return &xzSink{Writer: zw, closeFn: zw.Close}, nil
}

func (s *xzSink) Close() error { return s.closeFn() }
