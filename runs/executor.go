package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/internal/proc"
)

// Executor is where runs execute: [Local] runs the simulator as a child
// of the server, [*Slurm] submits each run as a batch job to a Slurm
// cluster. The Manager holds the one it was given; no other kinds exist.
type Executor interface {
	// Name is recorded with each run ("local", "slurm").
	Name() string
	executor()
}

// Job is one simulation for an Executor.
type Job struct {
	Run        cascade.Run
	Dir        string // the run's work directory, $CASCADE_DATA_DIR/work/runs/<id>
	KernelList string // the kernelslist.g to simulate
	Config     cascade.SimConfig
	Log        string
	Grew       func()
}

// ErrSimulatorNotFound is wrapped by Execute when the simulator program is
// missing or not executable.
var ErrSimulatorNotFound = errors.New("simulator not found")

// Local runs the simulator as a child process of the server: in its own
// process group, killed with it, stopped as a group.
type Local struct {
	// Command is the simulator and any leading arguments ("accel-sim.out").
	Command []string
	// Env is added to the server's environment for the simulator:
	// LD_LIBRARY_PATH with GPGPU-Sim's libcudart.so, as Accel-Sim's
	// setup_environment.sh sets it.
	Env []string
}

var _ Executor = Local{}

// Name implements [Executor].
func (Local) Name() string { return "local" }

func (Local) executor() {}

// Execute runs the job and blocks until the simulator has exited or ctx
// is done (then the simulator is stopped first). It writes the simulator's
// output to job.Log and calls job.Grew as it grows. An error wrapping
// ErrSimulatorNotFound means no simulator could start; one wrapping a
// *proc.LogError that the log could not be written (a full disk), and the
// simulator was stopped. It runs
// `<command> -trace <kernelslist.g> -config <cfg>/gpgpusim.config -config <cfg>/trace.config`
// in the job's directory, where the files of the config's folders are
// linked.
func (l Local) Execute(ctx context.Context, job Job) (simlog.Exit, error) {
	args := append(append([]string(nil), l.Command...), "-trace", job.KernelList)
	args = append(args, simconfig.SimulatorArgs(job.Config)...)
	// The log is the run's result: a simulator whose output cannot be
	// written (a full disk) is stopped, and the error is a *proc.LogError.
	res, err := proc.Run(ctx, proc.Cmd{Args: args, Dir: job.Dir, Env: l.Env, Log: job.Log, Grew: job.Grew, StopOnLogError: true})
	if errors.Is(err, proc.ErrNotFound) {
		return simlog.Exit{Code: -1}, fmt.Errorf("%w: %w", ErrSimulatorNotFound, err)
	}
	return simlog.Exit{Code: res.ExitCode, Signal: res.Signal}, err
}
