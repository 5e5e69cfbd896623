// Package lockfile holds a file's exclusive flock for as long as a
// process runs: the data directory's cascade.lock and an SQLite
// database's <file>.lock. The kernel releases the lock when the process
// ends, a killed one's too, so a stale file never keeps a server out.
// The file says who holds it, for the refusal of the next.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrHeld is the error of [Hold] on a file another holder has locked.
var ErrHeld = errors.New("held by another process")

// Wait is how long Hold waits for a lock another holds. The flock
// belongs to the open file, and a process the holder forks keeps it
// between its fork and its exec (where the descriptor, close-on-exec,
// goes): for a moment after a server closed its lock, a child another
// goroutine of the process was starting held it, and a server started
// again at once (as tests and supervisors do) was refused as "in use".
const Wait = time.Second

// Hold takes path's exclusive flock, creating the file, and writes holder
// in it, waiting up to Wait while another holds it. When another still
// holds it, the error wraps ErrHeld and who is what that holder wrote (""
// when nothing). Closing the file gives the lock up.
func Hold(path, holder string) (f *os.File, who string, err error) {
	return HoldWithin(path, holder, Wait)
}

// HoldWithin is Hold waiting up to wait.
func HoldWithin(path, holder string, wait time.Duration) (f *os.File, who string, err error) {
	f, who, err = hold(path, holder)
	for deadline := time.Now().Add(wait); errors.Is(err, ErrHeld) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		f, who, err = hold(path, holder)
	}
	return f, who, err
}

// hold is one try of Hold.
func hold(path, holder string) (f *os.File, who string, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		if b, err := os.ReadFile(path); err == nil {
			who = strings.TrimSpace(string(b))
		}
		return nil, who, fmt.Errorf("%s: %w", path, ErrHeld)
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintln(f, holder)
	}
	return f, "", nil
}
