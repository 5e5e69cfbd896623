package runs

import (
	"errors"
	"io/fs"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/internal/proc"
)

// LogLines returns up to n last lines of the run's simulator log; none
// when it does not exist yet.
func (m *Manager) LogLines(id string, n int) ([]string, error) {
	lines, err := proc.LastLines(m.LogPath(id), n)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	return lines, err
}

// TailLog follows the run's simulator log from (at most 1 MiB before) its
// end.
func (m *Manager) TailLog(id string) cascade.LogTail { return &proc.Tail{Path: m.LogPath(id)} }
