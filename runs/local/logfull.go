package local

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cascade-sim/cascade/internal/proc"
)

// logKeep is how much of a log that filled the disk is kept: its end,
// which holds the simulator's last words, and the room the rest took is
// given back so that the run's end can be recorded (SQLite's file is
// usually on the same disk).
const logKeep = 64 << 10

// logFailure is the error of a run whose simulator was stopped because its
// log could not be written, and, when the disk is full, cuts the log to
// its last logKeep bytes: the parser has read all of it already.
func (e *Executor) logFailure(le *proc.LogError) string {
	rel := le.Path
	if e.cfg.DataDir != "" {
		if r, err := filepath.Rel(e.cfg.DataDir, le.Path); err == nil {
			rel = r // work/runs/<id>/accel-sim.log
		}
	}
	var errno syscall.Errno
	if !errors.As(le.Err, &errno) || (errno != syscall.ENOSPC && errno != syscall.EDQUOT) {
		return fmt.Sprintf("simulator stopped: its log %s cannot be written: %v", rel, le.Err)
	}
	if err := cutLog(le.Path, logKeep, fmt.Sprintf("cascade: %v: the simulator was stopped and this log cut to its last %d KiB\n", errno, logKeep>>10)); err != nil {
		e.log.Warn("cut the log of a run that filled the disk", "path", le.Path, "err", err)
	}
	return fmt.Sprintf("simulator stopped: %v writing its log %s (the log keeps its last %d KiB)", errno, rel, logKeep>>10)
}

// cutLog keeps the last keep bytes of the file at path, from a line start,
// followed by note.
func cutLog(path string, keep int64, note string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	start := max(0, fi.Size()-keep)
	tail := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(tail, start); err != nil && err != io.EOF {
		return err
	}
	if start > 0 {
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:] // from the first whole line
		}
	}
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		tail = append(tail, '\n')
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(tail, note...), 0); err != nil {
		return err
	}
	return nil
}
