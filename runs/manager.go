package runs

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/internal/workqueue"
)

// Store is what the run lifecycle reads and writes of the database
// (*db.DB): runs as they are launched, queued, run and end, the kernel
// results they store as they run, and sweeps as they are launched and
// cancelled. What finished runs give back is read by package results.
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Run(ctx context.Context, id string) (cascade.Run, error)
	RunsInState(ctx context.Context, s cascade.RunState) ([]cascade.Run, error)
	TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error)
	DeleteRuns(ctx context.Context, ids []string) error
	// CreateRuns stores runs in one transaction, in order.
	CreateRuns(ctx context.Context, rs []cascade.Run) error
	UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error)
	UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) ([]cascade.Run, []string, error)
	AppendRunKernels(ctx context.Context, runID string, from int, ks []cascade.RunKernel) error
	// RunKernelPage returns a page of a run's kernel results in launch
	// order, after the cursor (cascade.Cursor of a Seq) p.After.
	RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)
	// SetRunKernelStats sets the Stats of stored kernels of a run, each
	// by its Seq, leaving the rest of them as stored.
	SetRunKernelStats(ctx context.Context, runID string, ks []cascade.RunKernel) error
	// CopyRunKernels makes to's kernel results a copy of from's, in the
	// store.
	CopyRunKernels(ctx context.Context, from, to string) error
	// PeakRSS is the largest peak resident memory among the last recent
	// runs of a config that recorded one (of traceID's alone when it is
	// not ""); 0 for none.
	PeakRSS(ctx context.Context, simConfig, traceID string, recent int) (int64, error)

	CreateSweep(ctx context.Context, s *cascade.Sweep, runs []cascade.Run) error
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
	SweepRuns(ctx context.Context, id string, states ...cascade.RunState) ([]cascade.Run, error)
	CancelQueuedSweepRuns(ctx context.Context, id, history string) ([]cascade.Run, error)
}

// Config configures a Manager.
type Config struct {
	BucketDir  string // where trace directories are
	WorkDir    string // runs work in WorkDir/runs/<id>
	ConfigsDir string // CASCADE_SIM_CONFIGS_DIR: tested-config directories
	// NewExecutor makes the Manager's executor, given the Host it records
	// runs through; New calls it once.
	NewExecutor func(Host) Executor
	Store       Store
	Events      cascade.Publisher
	Logger      *slog.Logger

	// TraceConfigsDir, when set, holds the trace.config directories, and
	// ConfigsDir the gpgpusim.config ones, paired by name, as in an
	// Accel-Sim checkout (see [simconfig.LoadPaired]).
	TraceConfigsDir string

	// Ended, if set, is given each run that ran, once its end (succeeded,
	// failed, cancelled while running) is committed, for /metrics.
	Ended func(cascade.Run)

	// Simulator is the command the executor runs the simulator with (a
	// program, a path or a name looked up in PATH, and any leading
	// arguments), whose sum each run records (see [SimulatorSum]); empty
	// records none, and then no launch ever reuses an earlier run (see
	// [Manager.Launch]).
	Simulator []string

	// StatsTable is the simulator statistics every run's log is read for
	// (CASCADE_SIM_STATS_FILE); nil is simstats.Builtin().
	StatsTable *simstats.Table

	// Probe, when its Command is set, is the simulator [Manager.Probe]
	// asks which configs it accepts and which binary versions it decodes.
	Probe simprobe.Simulator
	// ProbeCache, when set, is the file the probe's answers are kept in
	// across restarts.
	ProbeCache string

	// ModifiersFile is the define-standard-cfgs.yml whose bases and
	// modifiers name config variants (CASCADE_CONFIG_MODIFIERS, or an
	// Accel-Sim checkout's); "" names none.
	ModifiersFile string
}

// Manager owns runs: it launches them, queues them in order, prepares
// their jobs and hands them to its executor, follows their logs for it,
// and records their results. Run rows are the truth: on start it queues
// again what a previous server left running, and gives its executor the
// rest to reattach to. Its methods are safe for concurrent use.
type Manager struct {
	cfg  Config
	log  *slog.Logger
	exec Executor

	retryPolicy retryPolicy // finish's, when the database fails (retry.go)

	// launchMu makes Launch and RemoveTrace take turns: no run is created
	// for a trace whose runs are being removed.
	launchMu sync.Mutex

	// queue holds the queued runs' ids in launch order and hands at most
	// the executor's Slots of them to it at once.
	queue *workqueue.Queue[string]

	mu      sync.Mutex
	running map[string]*active // runs a worker took, until its Start returns

	configs *Configs       // the configs runs launch with
	logs    Logs           // the runs' simulator logs
	handle  ExecutorHandle // exec as the rest of the server sees it

	// kernels is what it stored of its running runs' kernel results, and
	// the statistics totals of those that ended here (see LiveTotals).
	kernels *kernelSaves

	// ctx is Run's: it ends with the server. Work reads it.
	ctx context.Context

	// coord owns the runs the executor never runs (see Coordinator).
	coord Coordinator

	warm *segmentWarmer // a segment's warming kernel (warm.go)
}

// active is a run a worker has taken: done is closed once the executor's
// Start of it has returned (for the local executor: its simulator is
// gone); removed says RemoveTrace stopped it: its row is about to go, so
// its end is neither recorded nor published.
type active struct {
	done    chan struct{}
	removed atomic.Bool
}

// track registers the run a worker has taken as active; untrack, deferred
// by the worker, forgets it and closes done.
func (m *Manager) track(id string) (a *active, untrack func()) {
	a = &active{done: make(chan struct{})}
	m.mu.Lock()
	m.running[id] = a
	m.mu.Unlock()
	return a, func() {
		m.mu.Lock()
		delete(m.running, id)
		m.mu.Unlock()
		close(a.done)
	}
}

// removing reports whether RemoveTrace is removing the run a worker took.
func (m *Manager) removing(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.running[id]
	return a != nil && a.removed.Load()
}

// New returns a Manager, with the executor cfg.NewExecutor makes; call
// Run to start executing.
func New(cfg Config) *Manager {
	if cfg.StatsTable == nil {
		cfg.StatsTable = simstats.Builtin()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, log: log.With("component", "runs"), running: map[string]*active{},
		logs: Logs{workDir: cfg.WorkDir}, kernels: newKernelSaves(cfg.Store, cfg.StatsTable), coord: nobody{}, warm: newSegmentWarmer(cfg.WorkDir), retryPolicy: finishRetry}
	m.configs = &Configs{cfg: cfg, log: m.log}
	m.exec = cfg.NewExecutor(host{m})
	m.handle = newExecutorHandle(m.exec, cfg)
	m.queue = workqueue.New(workqueue.Config[string]{Limit: m.exec.Slots(), Work: m.start, Logger: m.log})
	return m
}

// Configs is the configs runs launch with, checked by the simulator.
func (m *Manager) Configs() *Configs { return m.configs }

// Logs reads the runs' simulator logs.
func (m *Manager) Logs() Logs { return m.logs }

// Executor is the Manager's executor as the rest of the server sees it:
// its health, its slots, its check at start.
func (m *Manager) Executor() ExecutorHandle { return m.handle }

func (m *Manager) runDir(id string) string { return runDirIn(m.cfg.WorkDir, id) }

func (m *Manager) traceDir(id string) string { return filepath.Join(m.cfg.BucketDir, id) }

// Run queues again the runs a previous server left running without a
// job (they ran as its children, and run again from the beginning; their
// history says so), gives the executor the queued runs and those with a
// job to reattach to, queues the ones it says to start, and hands queued
// runs to the executor until ctx is done. Runs still running then are the
// executor's: a simulator of the server's own is stopped and its run left
// running in the database for the next start; a batch job keeps running.
func (m *Manager) Run(ctx context.Context) error {
	running, err := m.cfg.Store.RunsInState(ctx, cascade.RunRunning)
	if err != nil {
		return fmt.Errorf("load runs: %w", err)
	}
	var left []cascade.Run        // for the executor to reattach to
	var coordinated []cascade.Run // never the executor's: see Coordinator
	for _, r := range running {
		if r.Coordinated() {
			coordinated = append(coordinated, r)
			continue
		}
		if r.HasJob() {
			left = append(left, r)
			continue
		}
		r, saved, err := m.cfg.Store.UpdateRun(ctx, r.ID, func(r *cascade.Run) error {
			if r.State != cascade.RunRunning {
				return cascade.ErrUnchanged // removed with its trace meanwhile
			}
			r.State, r.StartedAt, r.KernelsDone = cascade.RunQueued, nil, 0
			r.History = append(r.History, Stamp("the server restarted while this run was running; it runs again from the beginning"))
			return nil
		})
		if cascade.ErrorCode(err) == cascade.ENOTFOUND || (err == nil && !saved) {
			continue // removed with its trace meanwhile
		}
		if err != nil {
			return fmt.Errorf("requeue run: %w", err)
		}
		m.log.Info("run requeued after restart", "run", r.ID)
		m.publish(r)
	}
	queued, err := m.cfg.Store.RunsInState(ctx, cascade.RunQueued)
	if err != nil {
		return fmt.Errorf("load runs: %w", err)
	}
	for _, r := range queued {
		if r.Coordinated() {
			coordinated = append(coordinated, r)
		} else {
			left = append(left, r)
		}
	}
	m.ctx = ctx // before the queue starts any work
	byID := make(map[string]cascade.Run, len(left))
	for _, r := range left {
		byID[r.ID] = r
	}
	for _, id := range m.exec.Reattach(ctx, left) {
		if r, ok := byID[id]; ok {
			m.enqueue(r)
		}
	}
	m.coord.Start(ctx, coordinated)
	var wg sync.WaitGroup
	wg.Go(func() { m.queue.Run(ctx) })
	m.exec.Run(ctx)
	wg.Wait()
	m.coord.Stop()
	return nil
}

// Stamp is a line of a run's History: the time, then msg.
func Stamp(msg string) string { return time.Now().UTC().Format(time.RFC3339) + " " + msg }

func (m *Manager) publish(r cascade.Run) {
	m.cfg.Events.Publish(cascade.RunUpdated{Run: r})
	m.coord.Changed(r)
}
