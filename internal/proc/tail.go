package proc

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// maxTailRead bounds one read of a growing log, and how much of an old log
// a new tailer starts with.
const maxTailRead = 1 << 20

// Tail reads a growing log file line by line from an offset. A file that
// shrank (a rerun truncated it) is read again from its start. It is meant
// for one goroutine.
type Tail struct {
	Path string
	// FromStart reads the file from its first line however long it is,
	// 1 MiB a call: a follower that must see every line of a log it joins
	// late (a batch job's, after a restart).
	FromStart bool
	off       int64
	partial   []byte
	started   bool
}

// Next returns the complete lines written since the last call, from at
// most 1 MiB of the file. The first call starts at most 1 MiB before the
// end of the file, on a line start, unless FromStart is set. A missing file
// reads as no lines.
func (t *Tail) Next() ([]string, error) {
	f, err := os.Open(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	skipFirst := false
	switch {
	case !t.started:
		t.started = true
		if size > maxTailRead && !t.FromStart {
			t.off, skipFirst = size-maxTailRead, true
		}
	case size < t.off:
		t.off, t.partial = 0, nil
	}
	if size == t.off {
		return nil, nil
	}
	buf := make([]byte, min(size-t.off, maxTailRead))
	n, err := f.ReadAt(buf, t.off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	t.off += int64(n)
	data := append(t.partial, buf[:n]...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		t.partial = data
		return nil, nil
	}
	t.partial = append([]byte(nil), data[last+1:]...)
	lines := strings.Split(string(data[:last]), "\n")
	if skipFirst && len(lines) > 0 {
		lines = lines[1:] // it started mid-line
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines, nil
}

// Rest returns the last line read so far if it has no newline yet.
func (t *Tail) Rest() string { return strings.TrimRight(string(t.partial), "\r") }
