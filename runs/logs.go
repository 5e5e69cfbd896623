package runs

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/internal/proc"
)

// Logs reads runs' simulator logs, each accel-sim.log in its run's
// directory ([Manager.Logs] returns the Manager's).
type Logs struct {
	workDir string // the Manager's Config.WorkDir
}

// LogPath is the simulator log of the run with the given id.
func (l Logs) LogPath(id string) string {
	return filepath.Join(runDirIn(l.workDir, id), "accel-sim.log")
}

// LogLines returns up to n last lines of the run's simulator log; none
// when it does not exist yet.
func (l Logs) LogLines(id string, n int) ([]string, error) {
	lines, err := proc.LastLines(l.LogPath(id), n)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	return lines, err
}

// TailLog follows the run's simulator log from (at most 1 MiB before) its
// end.
func (l Logs) TailLog(id string) cascade.LogTail { return &proc.Tail{Path: l.LogPath(id)} }

// runDirIn is the directory of the run with the given id, under workDir
// (see [Config.WorkDir]).
func runDirIn(workDir, id string) string { return filepath.Join(workDir, "runs", id) }
