package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cascade-sim/cascade/internal/lockfile"
)

// One server a data directory: a second one would take the first one's
// runs for its own (requeue them, delete their work directories, start
// their simulators again) and its bucket's traces. The server holds an
// exclusive flock on the directory's cascade.lock while it runs
// (internal/lockfile).

// lockFile is the lock's file in the data directory.
const lockFile = "cascade.lock"

// dataLock is a held lock of a data directory.
type dataLock struct{ f *os.File }

// lockDataDir takes dir's lock and writes who holds it (this process,
// serving url), or says who does.
func lockDataDir(dir, url string) (*dataLock, error) {
	f, who, err := lockfile.Hold(filepath.Join(dir, lockFile), fmt.Sprintf("pid %d, %s", os.Getpid(), url))
	switch {
	case errors.Is(err, lockfile.ErrHeld):
		if who != "" {
			who = " (" + who + ")"
		}
		return nil, fmt.Errorf("the data directory %s is in use by another Cascade server%s: stop it, or give this one another data directory (--data-dir, CASCADE_DATA_DIR)", dir, who)
	case err != nil:
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	return &dataLock{f: f}, nil
}

// release gives the lock up.
func (l *dataLock) release() {
	if l != nil {
		l.f.Close()
	}
}
