package runs

import (
	"context"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/tracedir"
)

// Executor is where simulations execute. The Manager owns runs: it queues
// them in launch order, prepares each one's [Job] (directory, kernel list,
// config files) and hands it to Start, at most Slots at a time; what
// becomes of a job after that is the executor's, which records it through
// the [Host] it was made with (see Config.NewExecutor). The Manager
// never asks which executor it has, only whether it is also an
// [ArrayExecutor], which starts a sampled or split run's segments
// together. runs/local runs the simulator as a child of the server;
// runs/slurmexec submits a Slurm batch job each (a job array for
// segments).
//
// A run is the executor's once Start has been called with its job: the
// Manager itself cancels only queued runs that have no job
// ([cascade.Run.HasJob]), and asks the executor to cancel the others.
type Executor interface {
	// Name is the executor's kind, recorded with each run and sweep
	// ("local", "slurm") and reported as its status's Kind.
	Name() string

	// Slots is how many Start calls the Manager makes at once (the local
	// executor: simulations at once; Slurm: sbatch calls at once); at
	// least 1.
	Slots() int

	// Check checks, once at start, what the executor needs, and returns
	// what it found, one line each, for the server to print. dirs are the
	// directories jobs read and write. An error means the executor cannot
	// work at all (a missing command); a cluster that does not answer is
	// no error: Status says so until it does.
	Check(ctx context.Context, dirs []Dir) ([]string, error)

	// CheckConfig returns why no job could start under the config, or nil.
	// A launch under such a config is refused with the error (the Slurm
	// executor: the config folder's cascade-slurm.conf does not read).
	CheckConfig(cfg cascade.SimConfig) error

	// Reattach is given, once, before the first Start and before Run, the
	// unfinished runs a previous server left that the Manager did not
	// settle itself: the queued ones, in launch order, and the running
	// ones with a job (a running run without one was the server's child
	// and is queued again, running from the beginning). It returns the
	// ids of the queued runs to start now, in order; the others it
	// follows, or hands back later through [Host.Enqueue].
	Reattach(ctx context.Context, left []cascade.Run) []string

	// Run does the executor's own work (the Slurm executor polls its jobs)
	// until ctx is done, and returns then.
	Run(ctx context.Context)

	// Start starts the prepared job of a queued run, and records through
	// Host what becomes of it: the run running, its progress, its end.
	// It returns when the executor is done starting it: the local
	// executor once the simulator has exited and the run's end is
	// recorded; the Slurm executor once sbatch has answered (the run
	// stays queued with its job id; polling records the rest). A run that
	// is no longer queued by the time the executor would start it (it
	// was cancelled meanwhile) is not started, or its job is cancelled
	// as soon as it has one. ctx ends with the server:
	// a simulator the server runs itself is stopped then, its run left
	// running for the next start to run again; a batch job outlives it.
	Start(ctx context.Context, job Job)

	// Cancel stops the jobs of runs rs, which the executor has started
	// (running, or queued with a job); runs over by now are left as they
	// are. It returns the runs it changed, as stored and published: a run
	// whose job never ran is cancelled at once; one whose job is being
	// stopped ends CANCELLED once its job is gone, which the executor may
	// wait for before it returns (the local one does: a simulator of the
	// server's own is gone in seconds). A run it cannot
	// cancel is a CONFLICT error, joined with any other.
	Cancel(ctx context.Context, rs []cascade.Run) ([]cascade.Run, error)

	// Remove stops the job of a run whose trace was removed, and forgets
	// it without recording anything: its row is about to be deleted. r is
	// the run as stored. It may return before the job is gone; the
	// Manager waits for a Start call of the run to return.
	Remove(ctx context.Context, r cascade.Run)

	// Status is the executor's health: the Slurm executor is unhealthy
	// while Slurm's commands fail or time out; the local one is always
	// healthy. Every change is also told to [Host.StatusChanged].
	Status() cascade.ExecutorStatus
}

// Host is what an [Executor] may ask of the Manager that made it. An
// executor changes runs only through it, and never holds the Manager.
// Every change is committed first and published after, as a copy of the
// committed row. Its methods are safe for concurrent use.
type Host interface {
	// UpdateRun changes a stored run with fn and publishes it, as
	// [Store.UpdateRun]: it returns the run as stored and whether fn
	// changed it (fn returning cascade.ErrUnchanged leaves it), or
	// NOT_FOUND.
	UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error)
	// UpdateRuns is UpdateRun for many runs in one transaction: it returns
	// the runs fn changed and the ids that are not stored.
	UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) ([]cascade.Run, []string, error)
	// Follow starts following the log of a run's job (its Job.Log): each
	// Grew reads what was written since and records the progress and
	// per-kernel results it shows, while the run is running. total is how
	// many kernels the job simulates.
	Follow(ctx context.Context, id string, total int) Follower
	// KernelTotal is how many kernels a run simulates (its subset's, or
	// its trace's); 0 when that cannot be read.
	KernelTotal(ctx context.Context, id string) int
	// Finish records a run's end with its log's results, and publishes
	// it. A run that is over already stays as it was; one being removed
	// with its trace is left alone.
	Finish(ctx context.Context, id string, end End)
	// Enqueue hands queued runs back to Start, in launch order whatever
	// the order of ids (a run the executor could not submit yet); runs no
	// longer queued are skipped when their turn comes.
	Enqueue(ctx context.Context, ids []string) error
	// StatusChanged publishes the executor's new health.
	StatusChanged(st cascade.ExecutorStatus)
}

// Job is one simulation for an Executor: a queued run's, prepared.
type Job struct {
	Run        cascade.Run
	Dir        string // the run's work directory, $CASCADE_DATA_DIR/work/runs/<id>
	KernelList string // the kernelslist.g to simulate, in Dir (TraceArg)
	Config     cascade.SimConfig
	Log        string // the simulator's output goes here, in Dir
	Total      int    // kernels to simulate
	// PeakRSS is the most memory a simulation of its config took lately:
	// the largest peak resident memory of the last runs of its trace and
	// config, or of its config on any trace when those recorded none
	// (see [RecentRuns]); 0 when no run of the config recorded one.
	PeakRSS int64
}

// TraceArg is the simulator's -trace argument: KernelList relative to
// Dir, where the simulator runs, as "./<path>". Accel-Sim opens each
// kernel trace with popen("cat <the list's directory>/<name>"), a shell
// command: a trace id or a data directory holding a blank, a quote or a
// ';' was run as shell code (or split the path) when the list was named
// by its absolute path. The list is always under Dir (prepare links the
// trace's folder there), and the names in it are checked by
// kernellist.Parse.
func (j Job) TraceArg() string {
	rel, err := filepath.Rel(j.Dir, j.KernelList)
	if err != nil || !filepath.IsLocal(rel) {
		return j.KernelList // not prepared under Dir: a test's job
	}
	return "." + string(filepath.Separator) + rel
}

// RecentRuns is how many of the last runs of a config (or of a trace and
// config) a [Job]'s PeakRSS is the largest peak of.
const RecentRuns = 5

// End is how a run's job ended, for [Host.Finish].
type End struct {
	State cascade.RunState // SUCCEEDED, FAILED or CANCELLED
	// Error says why it failed (or that a cancel came from outside); ""
	// for none.
	Error string
	// Log is the job's log as read to its end, whose kernels are the
	// run's results; nil when the job never ran.
	Log *simlog.Parser
	// Also, if set, makes more changes to the run in the same write.
	Also func(r *cascade.Run)
}

// Dir is a directory jobs read or write, named for messages ("traces").
type Dir struct{ What, Path string }

// Judge is the end of a simulator that exited (or a batch job that
// completed) by what its log says: SUCCEEDED, or FAILED with the reason,
// and for a trace file type the simulator does not read, how to serve it
// one it does.
func Judge(log *simlog.Parser, exit simlog.Exit, traceID string) End {
	o := log.Outcome(exit)
	switch {
	case o.Succeeded:
		return End{State: cascade.RunSucceeded, Log: log}
	case o.Failure == simlog.FailureTraceFormat && tracedir.IsRawKernel(o.File):
		return End{State: cascade.RunFailed, Error: o.Reason + ". " + rawTraceFix(o.File, traceID), Log: log}
	case o.Failure == simlog.FailureTraceFormat:
		return End{State: cascade.RunFailed, Error: o.Reason + ". " + traceFormatFix(traceID), Log: log}
	}
	return End{State: cascade.RunFailed, Error: o.Reason, Log: log}
}
