package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/runs"
)

// Config configures the local executor.
type Config struct {
	// Command is the simulator and any leading arguments ("accel-sim.out").
	Command []string
	// Env is added to the server's environment for the simulator:
	// LD_LIBRARY_PATH with GPGPU-Sim's libcudart.so, as Accel-Sim's
	// setup_environment.sh sets it.
	Env []string
	// Concurrency is how many simulators run at once
	// (CASCADE_RUN_CONCURRENCY). 0 sizes it by the machine: up to CPUs at
	// once, each started only once the memory recent runs of its config
	// took ([runs.Job.PeakRSS], or DefaultPeakRSS) fits in the memory
	// available beside the simulators running; until then its run stays
	// queued.
	Concurrency int
	// CPUs caps the simulators at once when Concurrency is 0; 0 is
	// runtime.GOMAXPROCS(0), the CPUs this process may use.
	CPUs int
	// Memory reads the memory available when Concurrency is 0; nil is
	// [ReadMemory]. Tests set it.
	Memory func() (Memory, error)
	// DataDir, when set, is the data directory: a log that cannot be
	// written is named relative to it in its run's error.
	DataDir string
	Logger  *slog.Logger
}

// Executor runs each job's simulator as a child process of the server, in
// its own process group, at most Concurrency at once. It keeps nothing
// across a restart: the Manager runs again what was running.
type Executor struct {
	host runs.Host
	cfg  Config
	log  *slog.Logger
	// gate holds simulations back until the memory they need is
	// available; nil when Concurrency is set.
	gate *gate
	// sizing says how many simulations run at once, for the log at start
	// and Status.
	sizing string

	mu sync.Mutex
	// running are the jobs Start has, by run id, from before their run is
	// committed RUNNING until Start returns: a Cancel that reads RUNNING
	// always finds the job.
	running map[string]*started
}

// started is a job Start has: cancel stops it, done is closed once Start
// has recorded its end and returns.
type started struct {
	cancel context.CancelFunc
	done   chan struct{}
}

var _ runs.Executor = (*Executor)(nil)

// New returns a local executor that records runs through h.
func New(h runs.Host, cfg Config) *Executor {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Executor{host: h, cfg: cfg, log: log.With("component", "runs"), running: map[string]*started{}}
	var mem Memory
	var err error
	if cfg.Concurrency <= 0 {
		read := cfg.Memory
		if read == nil {
			read = ReadMemory
		}
		e.gate = newGate(read, e.log)
		mem, err = read()
	}
	e.sizing = describe(cfg.Concurrency, e.Slots(), mem, err)
	return e
}

// Name implements [runs.Executor]: "local".
func (*Executor) Name() string { return "local" }

// Slots implements [runs.Executor]: Concurrency simulators at once, or
// when it is 0 up to CPUs (as memory allows, see Config.Concurrency).
func (e *Executor) Slots() int { return slots(e.cfg.Concurrency, e.cfg.CPUs) }

// Check implements [runs.Executor]: the local executor needs nothing
// more than its simulator, whose absence fails each run saying so. It
// says how many simulations run at once.
func (e *Executor) Check(context.Context, []runs.Dir) ([]string, error) {
	return []string{e.sizing}, nil
}

// CheckConfig implements [runs.Executor]: every usable config will do.
func (*Executor) CheckConfig(cascade.SimConfig) error { return nil }

// Status implements [runs.Executor]: always healthy; its message says
// how many simulations run at once.
func (e *Executor) Status() cascade.ExecutorStatus {
	return cascade.ExecutorStatus{Kind: "local", Healthy: true, Message: &e.sizing}
}

// Reattach implements [runs.Executor]: nothing a previous server ran
// survived it, so the queued runs are started in their order. Runs with a
// Slurm job are left as they are (with a warning): this server does not
// follow them.
func (e *Executor) Reattach(_ context.Context, left []cascade.Run) []string {
	var start []string
	for _, r := range left {
		if r.HasJob() {
			e.log.Warn("run is a Slurm job, which this server does not follow; restart with CASCADE_EXECUTOR=slurm to follow it",
				"run", r.ID, "job", *r.Slurm.JobID, "state", r.State)
			continue
		}
		if r.State == cascade.RunQueued {
			start = append(start, r.ID)
		}
	}
	return start
}

// Run implements [runs.Executor]: the local executor has no work of its
// own; it waits for ctx.
func (*Executor) Run(ctx context.Context) { <-ctx.Done() }

// Start implements [runs.Executor]: it commits the run RUNNING, runs the
// simulator in the job's directory and blocks until it has exited, its
// log followed as it grows, then records the run's end. A cancelled job's
// simulator is stopped, as a group, and its run ends CANCELLED; when ctx
// ends (the server stops) the simulator is stopped and its run left
// RUNNING, for the next start to run again.
func (e *Executor) Start(ctx context.Context, job runs.Job) {
	id := job.Run.ID
	jobCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Known from before RUNNING is committed: a Cancel that reads RUNNING
	// always reaches the job.
	st := &started{cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	e.running[id] = st
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.running, id)
		e.mu.Unlock()
		close(st.done)
	}()

	if e.gate != nil {
		// Queued until the memory it needs is there; a run cancelled or
		// removed meanwhile, or a server stopping, ends the wait.
		if !e.gate.admit(jobCtx, id, need(job.PeakRSS), func() bool { return e.queued(ctx, id) }) {
			return
		}
		defer e.gate.done(id)
	}
	r, started, err := e.host.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunQueued || r.HasJob() {
			return cascade.ErrUnchanged // cancelled while it waited
		}
		now := time.Now().UTC()
		r.State, r.StartedAt, r.Error = cascade.RunRunning, &now, nil
		r.KernelsDone, r.KernelsTotal = 0, job.Total
		return nil
	})
	if err != nil || !started {
		if err != nil && ctx.Err() == nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			e.log.Error("start run", "run", id, "err", err)
		}
		return
	}
	e.log.Info("run started", "run", id, "trace", r.TraceID, "config", r.SimConfig)
	if jobCtx.Err() != nil { // cancelled while it started
		if ctx.Err() == nil {
			e.host.Finish(ctx, id, runs.End{State: cascade.RunCancelled})
		}
		return
	}

	f := e.host.Follow(ctx, id, job.Total)
	exit, res, err := execute(jobCtx, e.cfg, job, f.Grew, func(pid int) {
		if e.gate != nil {
			e.gate.started(id, pid)
		}
	})
	p := f.Finish()
	var logErr *proc.LogError
	var end runs.End
	// A simulator that ended on its own as the server began to stop (no
	// error: proc.Run stopped nothing) has its end recorded all the same,
	// within finishGrace, rather than run again from the start.
	stopping := ctx.Err() != nil
	switch {
	case stopping && err != nil:
		return // shutdown: the run stays running and is redone on the next start
	case !stopping && jobCtx.Err() != nil:
		end = runs.End{State: cascade.RunCancelled, Log: p}
	case errors.As(err, &logErr):
		end = runs.End{State: cascade.RunFailed, Error: e.logFailure(logErr), Log: p}
	case errors.Is(err, ErrSimulatorNotFound):
		end = runs.End{State: cascade.RunFailed, Log: p,
			Error: fmt.Sprintf("%v. Set CASCADE_SIM_CMD to Accel-Sim's accel-sim.out (or the stand-in simulator, see README)", err)}
	case err != nil:
		end = runs.End{State: cascade.RunFailed, Error: "simulator: " + err.Error(), Log: p}
	default:
		end = runs.Judge(p, exit, r.TraceID)
	}
	end.Also = func(r *cascade.Run) { recordCost(r, res) }
	if stopping {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishGrace)
		defer cancel()
		ctx = fctx
	}
	e.host.Finish(ctx, id, end)
}

// finishGrace is how long a stopping server gives the end of a run whose
// simulator had ended on its own to be stored.
const finishGrace = 30 * time.Second

// queued reports whether the run is still queued without a job: not
// cancelled while it waited for memory.
func (e *Executor) queued(ctx context.Context, id string) bool {
	r, _, err := e.host.UpdateRun(ctx, id, func(*cascade.Run) error { return cascade.ErrUnchanged })
	return err == nil && r.State == cascade.RunQueued && !r.HasJob()
}

// recordCost records on a run what its simulator process cost: its wall
// time and peak resident memory, from its rusage. A process that never
// started leaves them unknown.
func recordCost(r *cascade.Run, res proc.Result) {
	if res.Wall > 0 {
		r.Figures.WallSeconds = res.Wall.Seconds()
	}
	if res.PeakRSS > 0 {
		r.Figures.PeakRSSBytes = res.PeakRSS
	}
}

// Cancel implements [runs.Executor]: it stops the simulators of running
// runs rs and waits (up to CancelWait, or ctx) until each is gone and its
// run's end recorded CANCELLED; it changes no run itself. A run that is a
// Slurm job is a CONFLICT: this server cannot reach it.
func (e *Executor) Cancel(ctx context.Context, rs []cascade.Run) ([]cascade.Run, error) {
	var errs []error
	var gone []chan struct{}
	for _, r := range rs {
		if r.HasJob() && !r.State.Final() {
			errs = append(errs, cascade.Errorf(cascade.ECONFLICT, "run %q is Slurm job %d, and this server runs simulations itself (CASCADE_EXECUTOR=local): restart it with CASCADE_EXECUTOR=slurm to cancel the job", r.ID, *r.Slurm.JobID))
			continue
		}
		if done := e.stop(r.ID); done != nil {
			gone = append(gone, done)
		}
	}
	wait, stop := context.WithTimeout(ctx, CancelWait)
	defer stop()
	for _, done := range gone {
		select {
		case <-done:
		case <-wait.Done():
			return nil, errors.Join(errs...)
		}
	}
	return nil, errors.Join(errs...)
}

// CancelWait bounds how long Cancel waits for a cancelled simulator to be
// gone: SIGKILL follows SIGTERM after proc.DefaultGrace.
const CancelWait = 2 * proc.DefaultGrace

// Remove implements [runs.Executor]: it stops the run's simulator; Start
// returns once it is gone, and the Host records no end for a run being
// removed.
func (e *Executor) Remove(_ context.Context, r cascade.Run) { e.stop(r.ID) }

// stop cancels the job of the run, if Start has it, and returns what is
// closed once Start returns; nil when it has none.
func (e *Executor) stop(id string) chan struct{} {
	e.mu.Lock()
	st := e.running[id]
	e.mu.Unlock()
	if st == nil {
		return nil
	}
	st.cancel()
	return st.done
}
