package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// One server a data directory: a second one would take the first one's
// runs for its own (requeue them, delete their work directories, start
// their simulators again) and its bucket's traces. The server holds an
// exclusive flock on the directory's cascade.lock while it runs; the
// kernel releases it when the process ends, a killed one's too, so a
// stale file never keeps a server out. The file says which server holds
// it, for the refusal.

// lockFile is the lock's file in the data directory.
const lockFile = "cascade.lock"

// dataLock is a held lock of a data directory.
type dataLock struct{ f *os.File }

// lockDataDir takes dir's lock and writes who holds it (this process,
// serving url), or says who does.
func lockDataDir(dir, url string) (*dataLock, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock the data directory: %s: %w", path, err)
		}
		who := "another Cascade server"
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			who += " (" + strings.TrimSpace(string(b)) + ")"
		}
		return nil, fmt.Errorf("the data directory %s is in use by %s: stop it, or give this one another data directory (--data-dir, CASCADE_DATA_DIR)", dir, who)
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d, %s\n", os.Getpid(), url)
	}
	return &dataLock{f: f}, nil
}

// release gives the lock up.
func (l *dataLock) release() {
	if l != nil {
		l.f.Close()
	}
}
