package slurmexec

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/slurm"
)

// Config configures the Slurm executor.
type Config struct {
	// Command is the simulator and any leading arguments, as the compute
	// nodes find it.
	Command []string
	// Env is exported to the job (LD_LIBRARY_PATH); the job also inherits
	// the server's environment, sbatch's default.
	Env []string
	// Slurm is the Slurm settings, as the serve command read them: the
	// executor's Client runs the commands as they say, it polls every
	// Slurm.PollInterval with Slurm.Submitters sbatch calls at most at
	// once, and every job gets Slurm.Options (a config's OptionsFile
	// overrides them).
	Slurm slurm.Config
	// PollFailed, if set, is told about each failed poll (for /metrics).
	PollFailed func(error)
	Logger     *slog.Logger
}

// Executor runs each job as a batch job on a Slurm cluster: the job
// script, written into the run's directory, runs the simulator there with
// its log beside it, so the directory must be on a filesystem the compute
// nodes share with the server (at the same path). It submits the jobs it
// is given, polls every unfinished job with one squeue call per interval
// (and sacct for jobs squeue has forgotten, where the cluster keeps
// accounting), follows each running job's log, and cancels with scancel.
// Slurm's commands failing or timing out change no run: the executor
// turns unhealthy until Slurm answers again.
type Executor struct {
	host     runs.Host
	cfg      Config
	c        *slurm.Client
	log      *slog.Logger
	interval time.Duration

	mu   sync.Mutex
	jobs map[string]*job // by run id: submitted and not over
	// cancels are jobs whose scancel Slurm did not take (it was down):
	// every poll tries again until it does.
	cancels map[slurm.Ref]bool
	// held are queued runs not submitted because Slurm was down; maybe
	// are those whose sbatch may have queued a job Cascade did not hear
	// of (it failed or the server stopped while it ran). The next poll
	// that reaches Slurm adopts the jobs found by name and hands the rest
	// back to the Manager's queue for submission again.
	held, maybe map[string]bool
	// tasks are the maybe runs that are segments: the job array (by its
	// parent's name) and task their job would be.
	tasks  map[string]arrayTask
	status cascade.ExecutorStatus
	since  time.Time // when Slurm stopped answering
	info   string    // what the start found: the healthy status's message
}

// job is a run's submitted job as the poller last saw it.
type job struct {
	runID     string
	traceID   string
	ref       slurm.Ref     // the job, or its job array's task
	last      slurm.Status  // last applied; zero before the first poll
	total     int           // kernels to simulate
	f         runs.Follower // from when the job started; under Executor.mu
	cancelled bool          // Cascade asked Slurm to cancel it; under Executor.mu
	// endedAt: when a poll first found the job ended without its peak
	// memory in accounting yet (awaitUsage); zero before.
	endedAt time.Time
}

var _ runs.Executor = (*Executor)(nil)

// New returns a Slurm executor that records runs through h.
func New(h runs.Host, cfg Config) *Executor {
	interval := cfg.Slurm.PollInterval
	if interval <= 0 {
		interval = slurm.DefaultPollInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{
		host: h, cfg: cfg, c: &slurm.Client{Config: cfg.Slurm, PollFailed: cfg.PollFailed},
		log: log.With("component", "runs"), interval: interval,
		jobs: map[string]*job{}, cancels: map[slurm.Ref]bool{}, tasks: map[string]arrayTask{},
		held: map[string]bool{}, maybe: map[string]bool{},
		status: cascade.ExecutorStatus{Kind: "slurm", Healthy: true},
	}
}

// Name implements [runs.Executor]: "slurm".
func (*Executor) Name() string { return "slurm" }

// Slots implements [runs.Executor]: how many sbatch calls run at once.
func (e *Executor) Slots() int {
	if e.cfg.Slurm.Submitters > 0 {
		return e.cfg.Slurm.Submitters
	}
	return slurm.DefaultSubmitters
}

// JobName is the Slurm job name of a run, how squeue shows it.
func JobName(runID string) string { return "cascade-" + runID }

// refOf is a stored run's job: a job, or a job array's task.
func refOf(s cascade.SlurmJob) slurm.Ref {
	if s.ArrayTaskID != nil {
		return slurm.TaskRef(slurm.JobID(*s.JobID), *s.ArrayTaskID)
	}
	return slurm.JobRef(slurm.JobID(*s.JobID))
}

// cancelRequested starts the history line of a run whose job Cascade asked
// Slurm to cancel: after a restart its CANCELLED end is Cascade's own.
const cancelRequested = "cancel requested: scancel of Slurm job"

// trackLocked follows the job of a stored run from now on.
func (e *Executor) trackLocked(r cascade.Run) *job {
	j := &job{runID: r.ID, traceID: r.TraceID, ref: refOf(r.Slurm), total: r.KernelsTotal}
	j.last = slurm.Status{ID: j.ref.ID, State: slurm.Pending, SlurmState: r.Slurm.State, Reason: r.Slurm.Reason, Node: r.Slurm.Node, Partition: r.Slurm.Partition}
	if r.State == cascade.RunRunning {
		j.last.State = slurm.Running
	}
	for _, h := range r.History {
		if strings.Contains(h, cancelRequested) {
			// Cascade asked for it; after a restart the scancel may not
			// have got through yet: the next poll sends it again.
			j.cancelled = true
			e.cancels[j.ref] = true
		}
	}
	e.jobs[r.ID] = j
	return j
}
