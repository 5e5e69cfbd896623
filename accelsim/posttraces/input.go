package posttraces

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ulikunitz/xz"
)

// xzProgram returns the xz binary to use, or "" for the pure-Go codec.
func xzProgram(opt string) string {
	if opt == "-" {
		return ""
	}
	if opt != "" {
		return opt
	}
	p, err := exec.LookPath("xz")
	if err != nil {
		return ""
	}
	return p
}

// procReader reads a child's stdout and, at its end, reports the child's
// failure instead of io.EOF: a truncated xz stream is an error, not a
// short trace.
type procReader struct {
	cmd    *exec.Cmd
	out    io.ReadCloser
	stderr *bytes.Buffer
	done   bool
	err    error
}

func (r *procReader) Read(b []byte) (int, error) {
	if r.done {
		return 0, r.err
	}
	n, err := r.out.Read(b)
	if errors.Is(err, io.EOF) {
		r.done = true
		r.err = io.EOF
		if werr := r.cmd.Wait(); werr != nil {
			r.err = fmt.Errorf("%s: %w: %s", strings.Join(r.cmd.Args, " "), werr, strings.TrimSpace(r.stderr.String()))
		}
		return n, r.err
	}
	return n, err
}

func (r *procReader) Close() error {
	if !r.done {
		r.done, r.err = true, io.EOF
		r.out.Close()
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
	return nil
}

type fileReader struct {
	io.Reader
	f *os.File
}

func (r fileReader) Close() error { return r.f.Close() }

// openTrace opens a raw trace, decompressing .xz through xzBin ("" = pure Go).
func openTrace(ctx context.Context, path, xzBin string) (io.ReadCloser, error) {
	if !strings.HasSuffix(path, ".xz") {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	if xzBin != "" {
		cmd := exec.CommandContext(ctx, xzBin, "-dc", "-T0", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", xzBin, err)
		}
		return &procReader{cmd: cmd, out: out, stderr: &stderr}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	zr, err := xz.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("xz: %w", err)
	}
	return fileReader{Reader: zr, f: f}, nil
}

// lineReader yields lines without their '\n' (and '\r'), counting them.
// A line is valid until the next call.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	num  int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<20)}
}

// maxLineBytes is the longest line a raw trace may hold. An instruction
// line of 32 addresses is under a kilobyte and a kernel's mangled name a
// few; a longer line is a corrupt file (one zero-filled after its header
// made the reader hold a whole 1.2 GB "line").
const maxLineBytes = 1 << 20

var (
	errLineTooLong = fmt.Errorf("a line longer than %d bytes: not a trace line (a corrupt file?)", maxLineBytes)
	errNoNewline   = errors.New("the file ends inside this line, without its newline: a truncated file (upload it again)")
)

// next returns the next line; at the end it returns io.EOF, or the
// reader's error (reported before a partial last line is used). A line
// longer than maxLineBytes is errLineTooLong and a last line without its
// newline errNoNewline, both with num at that line.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(lr.long) > maxLineBytes {
				lr.num++
				return nil, errLineTooLong
			}
			line, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, line...)
		}
		line = lr.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	lr.num++
	if len(line) > maxLineBytes+1 {
		return nil, errLineTooLong
	}
	if errors.Is(err, io.EOF) {
		return nil, errNoNewline
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}
