package postproc

import (
	"errors"
	"io/fs"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/internal/proc"
)

// LogLines returns up to n last lines of the trace's post-processing log; none
// when it does not exist yet.
func (p *Processor) LogLines(id string, n int) ([]string, error) {
	lines, err := proc.LastLines(p.LogPath(id), n)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	return lines, err
}

// TailLog follows the trace's post-processing log from (at most 1 MiB before) its
// end.
func (p *Processor) TailLog(id string) cascade.LogTail { return &proc.Tail{Path: p.LogPath(id)} }
