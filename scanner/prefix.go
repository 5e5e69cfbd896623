package scanner

import (
	"errors"
	"os"
	"strings"
)

// What lies directly under the prefix: a directory is a trace (one whose
// name is no dotfile's), a file is none.

// listTraces returns the names of the traces under the prefix: its
// directories, dotfiles' names left out.
func (s *Scanner) listTraces() (map[string]bool, error) {
	des, err := os.ReadDir(s.cfg.Root)
	if err != nil {
		return nil, err
	}
	present := make(map[string]bool, len(des))
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			present[de.Name()] = true
		}
	}
	return present, nil
}

// errNotADir is a walk's error for a name under the prefix that is no
// directory.
var errNotADir = errors.New("not a directory")

// notTrace logs, once per name, that a file directly under the prefix is
// no trace. It is never stored nor published.
func (s *Scanner) notTrace(name string) {
	if s.notTraces[name] {
		return
	}
	if s.notTraces == nil || len(s.notTraces) >= maxNotTraces {
		s.notTraces = map[string]bool{} // bounded: a name may be logged again
	}
	s.notTraces[name] = true
	s.log.Info("ignoring a file directly under the prefix: a trace is a directory", "name", name)
}

// maxNotTraces bounds the names notTrace remembers.
const maxNotTraces = 1024
