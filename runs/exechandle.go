package runs

import (
	"context"
	"path/filepath"

	"github.com/cascade-sim/cascade"
)

// ExecutorHandle is the Manager's executor as the rest of the server
// sees it: its health, how many runs it is handed at once, and the check
// it makes at start ([Manager.Executor] returns it). Starting, cancelling
// and following jobs stay the Manager's.
type ExecutorHandle struct {
	exec Executor
	dirs []Dir // the directories jobs read and write
}

func newExecutorHandle(exec Executor, cfg Config) ExecutorHandle {
	return ExecutorHandle{exec: exec, dirs: []Dir{
		{"run directories", filepath.Join(cfg.WorkDir, "runs")},
		{"traces", cfg.BucketDir},
		{"sim configs", cfg.ConfigsDir},
		{"trace configs", cfg.TraceConfigsDir},
	}}
}

// Status is the executor's health (see [Executor.Status]).
func (e ExecutorHandle) Status() cascade.ExecutorStatus { return e.exec.Status() }

// Slots is how many runs the executor is handed at once (see
// [Executor.Slots]): locally, how many simulators run at once at most; a
// split run's default number of segments, and a sampled run's estimate's.
func (e ExecutorHandle) Slots() int { return e.exec.Slots() }

// Check checks, at start, what the executor needs and says what it
// found, one line each (see [Executor.Check]): for Slurm, its commands,
// its controller, its accounting, and whether the directories jobs read
// and write are on a filesystem the compute nodes can share.
func (e ExecutorHandle) Check(ctx context.Context) ([]string, error) {
	return e.exec.Check(ctx, e.dirs)
}
