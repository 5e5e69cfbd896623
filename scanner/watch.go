package scanner

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// newWatcher watches the bucket directory and every directory below it
// and marks the trace under each event dirty. Directories created later are
// added as their events arrive. When the kernel's watch limit is reached
// the periodic scan still finds everything, only later.
func newWatcher(s *Scanner) (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(s.cfg.Root); err != nil {
		w.Close()
		return nil, err
	}
	warned := false
	addTree := func(dir string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			if err := w.Add(p); err != nil && !warned {
				warned = true
				s.watchGaps.Store(true)
				s.log.Warn("cannot watch every directory; relying on the periodic scan", "path", p, "err", err)
			}
			return nil
		})
	}
	des, _ := filepath.Glob(filepath.Join(s.cfg.Root, "*"))
	for _, d := range des {
		if !strings.HasPrefix(filepath.Base(d), ".") {
			addTree(d)
		}
	}
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				rel, err := filepath.Rel(s.cfg.Root, ev.Name)
				if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
					continue
				}
				if strings.HasPrefix(filepath.Base(ev.Name), ".") {
					continue // in-flight uploads and other dotfiles
				}
				id, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
				if strings.HasPrefix(id, ".") {
					continue
				}
				if ev.Has(fsnotify.Create) {
					addTree(ev.Name) // a no-op for files
				}
				s.Kick(id)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					s.log.Warn("file-system event queue overflowed; rescanning everything")
					s.Rescan()
				} else {
					s.log.Warn("file-system watcher", "err", err)
				}
			}
		}
	}()
	return w, nil
}
