package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/runs"
)

// ErrSimulatorNotFound is wrapped by the error of a job whose simulator
// program is missing or not executable.
var ErrSimulatorNotFound = errors.New("simulator not found")

// execute runs the job and blocks until the simulator has exited or ctx
// is done (then the simulator is stopped first). It writes the simulator's
// output to job.Log and calls grew as it grows. An error wrapping
// ErrSimulatorNotFound means no simulator could start; one wrapping a
// *proc.LogError that the log could not be written (a full disk), and the
// simulator was stopped. It runs
// `<command> -trace <kernelslist.g> -config <cfg>/gpgpusim.config -config <cfg>/trace.config`
// in the job's directory, where the files of the config's folders are
// linked. It also returns what the process cost (its wall time and peak
// resident set). started is told the simulator's pid once it runs.
func execute(ctx context.Context, cfg Config, job runs.Job, grew func(), started func(pid int)) (simlog.Exit, proc.Result, error) {
	args := append(append([]string(nil), cfg.Command...), "-trace", job.TraceArg())
	args = append(args, simconfig.SimulatorArgs(job.Config)...)
	// The log is the run's result: a simulator whose output cannot be
	// written (a full disk) is stopped, and the error is a *proc.LogError.
	// What a simulator of the same run left running when the server was
	// killed outright (a wrapper script's children) goes first.
	abs, _ := filepath.Abs(job.Dir)
	tag := "run " + abs
	proc.KillTagged(tag)
	res, err := proc.Run(ctx, proc.Cmd{Args: args, Dir: job.Dir, Env: cfg.Env, Log: job.Log, Grew: grew, StopOnLogError: true, Started: started, Tag: tag})
	if errors.Is(err, proc.ErrNotFound) {
		return simlog.Exit{Code: -1}, res, fmt.Errorf("%w: %w", ErrSimulatorNotFound, err)
	}
	// A SIGKILL from the kernel's OOM killer is OUT_OF_MEMORY, not OTHER.
	return simlog.Exit{Code: res.ExitCode, Signal: res.Signal, OOM: res.OOMKilled, OOMUnknown: res.OOMUnknown}, res, err
}
