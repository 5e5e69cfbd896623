package posttraces

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FullError is an error of a write that found no room: the disk is full
// (ENOSPC) or the user's quota spent (EDQUOT). It says which file was
// being written, by its path from the trace directory
// ("traces/kernel-3.tracez"), or for spill files which kernel they were
// for and where.
type FullError struct {
	Errno syscall.Errno // ENOSPC or EDQUOT
	What  string        // "traces/kernel-3.tracez"
	Err   error         // the write's own error
}

// Error reads "no space left on device writing traces/kernel-3.tracez".
func (e *FullError) Error() string { return e.Errno.Error() + " writing " + e.What }

// Unwrap returns the write's error, so that errors.Is(err, syscall.ENOSPC)
// holds.
func (e *FullError) Unwrap() error { return e.Err }

// noRoom returns the errno of an error that found no room, or 0.
func noRoom(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) && (errno == syscall.ENOSPC || errno == syscall.EDQUOT) {
		return errno
	}
	return 0
}

// traceRel names path from its trace directory, the parent of the traces
// directory it is in: "traces/kernel-3.tracez".
func traceRel(path string) string {
	return filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
}

// explainFull turns an error of processing in into out that found no
// room into a *FullError naming out, or in's spill files when the write
// that failed was one of those; other errors are returned as they are.
func (p *processor) explainFull(err error, in, out, spill string) error {
	errno := noRoom(err)
	var fe *FullError
	if errno == 0 || errors.As(err, &fe) {
		return err
	}
	what := traceRel(out)
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Path, spill+string(filepath.Separator)) {
		what = "the spill files of " + traceRel(in) + " in " + p.spillRoot
	}
	return &FullError{Errno: errno, What: what, Err: err}
}

// removeWritten removes the outputs this run renamed into place: a run
// that fails leaves none, so a full disk gets its room back and no
// half-processed trace is mistaken for a processed one.
func (p *processor) removeWritten() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range p.written {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.log.Warn("remove output of a failed run", "path", path, "err", err)
		}
	}
	p.written = nil
}

// wrote records an output renamed into place.
func (p *processor) wrote(path string) {
	p.mu.Lock()
	p.written = append(p.written, path)
	p.mu.Unlock()
}
