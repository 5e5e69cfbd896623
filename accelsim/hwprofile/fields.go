package hwprofile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one line: a raw page of every metric of `--set full`
// with a long templated kernel name is tens of kilobytes.
const maxLine = 16 << 20

// lines reads a file a line at a time, without its line ending, counting
// lines from 1, in memory bounded by its longest line.
type lines struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer, assembled
	n    int
	name string
}

func newLines(r io.Reader, name string) *lines {
	return &lines{br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// next returns the next line, valid until the following call, or io.EOF.
func (l *lines) next() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.br.ReadSlice('\n')
			l.long = append(l.long, line...)
			if len(l.long) > maxLine {
				return nil, fmt.Errorf("%s:%d: a line longer than %d MiB: not a profiler's CSV", l.name, l.n+1, maxLine>>20)
			}
		}
		line = l.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", l.name, err)
	}
	if len(line) == 0 && errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	l.n++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if l.n == 1 {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a byte-order mark
	}
	return line, nil
}

// splitter splits CSV lines as the profilers write them: fields separated
// by commas, quoted or not, a quote inside a quoted field doubled. It
// reuses its slices: fields are valid until the next split.
type splitter struct {
	fields [][]byte
	cols   []int // each field's 1-based byte column
	buf    []byte
}

// split splits line; an error gives the 1-based column where it went
// wrong.
func (s *splitter) split(line []byte) (col int, err error) {
	s.fields, s.cols, s.buf = s.fields[:0], s.cols[:0], s.buf[:0]
	// Unquoted fields of doubled quotes are copied into buf; grow it
	// first so earlier fields' slices of it stay valid.
	if cap(s.buf) < len(line) {
		s.buf = make([]byte, 0, len(line))
	}
	i := 0
	for {
		start := i
		if i < len(line) && line[i] == '"' {
			i++
			from := len(s.buf)
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					return start + 1, errors.New("a quoted field is not closed on its line")
				}
				s.buf = append(s.buf, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' { // a doubled quote
					s.buf = append(s.buf, '"')
					i++
					continue
				}
				break
			}
			s.fields = append(s.fields, s.buf[from:len(s.buf):len(s.buf)])
			s.cols = append(s.cols, start+1)
			if i < len(line) && line[i] != ',' {
				return i + 1, fmt.Errorf("%q after a closing quote: want a comma", line[i])
			}
		} else {
			j := bytes.IndexByte(line[i:], ',')
			if j < 0 {
				j = len(line) - i
			}
			s.fields = append(s.fields, line[i:i+j:i+j])
			s.cols = append(s.cols, start+1)
			i += j
		}
		if i >= len(line) {
			return 0, nil
		}
		i++ // the comma
	}
}
