package runs

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/internal/workqueue"
	"github.com/cascade-sim/cascade/tracedir"
)

// Store is the storage a Manager needs; *db.DB implements it.
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Run(ctx context.Context, id string) (cascade.Run, error)
	RunsInState(ctx context.Context, s cascade.RunState) ([]cascade.Run, error)
	TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error)
	DeleteRuns(ctx context.Context, ids []string) error
	CreateRun(ctx context.Context, r *cascade.Run) error
	UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error)
	UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) ([]cascade.Run, []string, error)
	SaveRunKernels(ctx context.Context, runID string, ks []cascade.RunKernel) error
	RunKernels(ctx context.Context, runID string) ([]cascade.RunKernel, error)
	RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)

	CreateSweep(ctx context.Context, s *cascade.Sweep, runs []cascade.Run) error
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
	Sweeps(ctx context.Context, p cascade.Page) (cascade.PageOf[cascade.Sweep], error)
	SweepProgress(ctx context.Context, id string) (cascade.SweepProgress, error)
	SweepRuns(ctx context.Context, id string, states ...cascade.RunState) ([]cascade.Run, error)
	CancelQueuedSweepRuns(ctx context.Context, id, history string) ([]cascade.Run, error)
}

// Config configures a Manager.
type Config struct {
	BucketDir   string // where trace directories are
	WorkDir     string // runs work in WorkDir/runs/<id>
	ConfigsDir  string // CASCADE_SIM_CONFIGS_DIR: tested-config directories
	Executor    Executor
	Concurrency int // simulations at once; 1 when 0
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

	// StatsTable is the simulator statistics every run's log is read for
	// (CASCADE_SIM_STATS_FILE); nil is simstats.Builtin().
	StatsTable *simstats.Table
}

// Manager owns runs: it launches them, queues them in order, executes
// them with at most Concurrency at once, follows their logs, and records
// their results. Run rows are the truth: on start it requeues what a
// previous server left running. Its methods are safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	// launchMu makes Launch and RemoveTrace take turns: no run is created
	// for a trace whose runs are being removed.
	launchMu sync.Mutex

	// queue holds the queued runs' ids in launch order and executes at
	// most Concurrency at once (the Slurm executor: submits at most
	// Slurm.Submitters at once).
	queue *workqueue.Queue[string]
	// local or slurm is the executor, by kind.
	local Local
	slurm *slurmExec

	mu      sync.Mutex
	running map[string]*active // runs a worker took, from before RUNNING is committed

	// ctx is Run's: it ends with the server. Work reads it.
	ctx context.Context

	results      *cache[string, Results]     // see Results
	sweepTallies *cache[string, *sweepTally] // see SweepComparison
	totals       *cache[string, StatTotals]  // see StatTotals
}

// active is a run a worker has taken (the queue's Cancel stops it): done
// is closed once its end is recorded and its simulator is gone; removed
// says RemoveTrace stopped it: its row is about to go, so its end is
// neither recorded nor published.
type active struct {
	done    chan struct{}
	removed atomic.Bool
}

// track registers the run a worker has taken as active; untrack, deferred
// by the worker, forgets it and closes done once its end is recorded.
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

// New returns a Manager; call Run to start executing.
func New(cfg Config) *Manager {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.StatsTable == nil {
		cfg.StatsTable = simstats.Builtin()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, log: log.With("component", "runs"), running: map[string]*active{},
		results: newCache[string, Results](maxCachedResults), sweepTallies: newCache[string, *sweepTally](maxCachedSweeps),
		totals: newCache[string, StatTotals](maxCachedTotals)}
	qc := workqueue.Config[string]{Limit: cfg.Concurrency, Work: m.execute, Logger: m.log}
	switch e := cfg.Executor.(type) {
	case Local:
		m.local = e
	case *Slurm:
		m.slurm = newSlurmExec(m, e)
		qc.Limit, qc.Work = m.slurm.submitters(), m.slurm.submit
	default:
		panic(fmt.Sprintf("runs: unknown executor %T", cfg.Executor))
	}
	m.queue = workqueue.New(qc)
	return m
}

// SimConfigs lists the tested configs, read anew on each call so a config
// added to the directory shows without a restart. A missing directory
// lists none.
func (m *Manager) SimConfigs() ([]cascade.SimConfig, error) {
	if m.cfg.ConfigsDir == "" {
		return nil, nil
	}
	load := simconfig.Load
	if m.cfg.TraceConfigsDir != "" {
		load = func(dir string) ([]cascade.SimConfig, error) { return simconfig.LoadPaired(dir, m.cfg.TraceConfigsDir) }
	}
	cfgs, err := load(m.cfg.ConfigsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return cfgs, err
}

// LogPath is the simulator log of the run with the given id.
func (m *Manager) LogPath(id string) string { return filepath.Join(m.runDir(id), "accel-sim.log") }

func (m *Manager) runDir(id string) string { return filepath.Join(m.cfg.WorkDir, "runs", id) }

func (m *Manager) traceDir(id string) string { return filepath.Join(m.cfg.BucketDir, id) }

// LaunchInput is what a user asks to simulate.
type LaunchInput struct {
	TraceID   string
	SimConfig string
	KernelIDs []int // nil for every kernel
	Label     string
}

// Launch creates a queued run and queues it for the executor. It returns
// NOT_FOUND for an unknown trace, CONFLICT for one that is not ready, and
// BAD_USER_INPUT for the sample trace, an unknown or unusable config, or
// kernel ids the trace does not have. A config of another architecture
// than the trace's is fine: the run simulates the trace on that
// architecture (see [Manager.CrossArchitecture]).
func (m *Manager) Launch(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	r, err := m.NewRun(ctx, in)
	if err != nil {
		return cascade.Run{}, err
	}
	if err := m.cfg.Store.CreateRun(ctx, &r); err != nil {
		return cascade.Run{}, err
	}
	m.log.Info("run queued", "run", r.ID, "trace", r.TraceID, "config", r.SimConfig)
	m.publish(r)
	m.Enqueue(r.ID)
	return r, nil
}

// NewRun checks a launch request as Launch does and returns the queued run
// it would create, not stored. With [Manager.Enqueue] it lets a caller
// store many runs at once (in one transaction) and then queue them.
func (m *Manager) NewRun(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	t, err := m.cfg.Store.Trace(ctx, in.TraceID)
	if err != nil {
		return cascade.Run{}, err
	}
	switch {
	case t.Sample:
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: %q is the sample trace, which has no instruction traces; upload a real trace to simulate", t.ID)
	case t.State != cascade.TraceReady:
		return cascade.Run{}, cascade.Errorf(cascade.ECONFLICT, "traceId: trace %q is %s; runs launch on ready traces", t.ID, strings.ToLower(string(t.State)))
	}
	cfg, err := m.config(in.SimConfig)
	if err != nil {
		return cascade.Run{}, err
	}
	if m.slurm != nil {
		if _, err := ConfigSlurmOptions(cfg); err != nil {
			return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "simConfig: %s: %v", in.SimConfig, err)
		}
	}
	var ids []int
	if in.KernelIDs != nil {
		if ids, err = m.checkKernels(t.ID, in.KernelIDs); err != nil {
			return cascade.Run{}, err
		}
	}
	r := cascade.Run{
		ID: newRunID(), TraceID: t.ID, SimConfig: in.SimConfig, KernelIDs: ids,
		State: cascade.RunQueued, Executor: m.cfg.Executor.Name(), History: []string{},
	}
	if in.Label != "" {
		r.Label = &in.Label
	}
	return r, nil
}

// Enqueue hands stored, queued runs to the executor, in the order given
// after any queued before: the local executor runs them as their turn
// comes, the Slurm executor submits them. A run already queued keeps its
// place; one that is no longer queued when its turn comes is skipped.
func (m *Manager) Enqueue(ids ...string) {
	for _, id := range ids {
		m.queue.Add(id)
	}
}

// config finds a usable config.
func (m *Manager) config(name string) (cascade.SimConfig, error) {
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, err
	}
	c, ok := simconfig.Find(cfgs, name)
	switch {
	case !ok:
		names := make([]string, len(cfgs))
		for i, c := range cfgs {
			names[i] = c.Name
		}
		if len(names) == 0 {
			return c, cascade.Errorf(cascade.EINVALID, "simConfig: no config %q: no configs are set up (CASCADE_SIM_CONFIGS_DIR)", name)
		}
		return c, cascade.Errorf(cascade.EINVALID, "simConfig: no config %q (have %s)", name, strings.Join(names, ", "))
	case !c.Usable():
		return c, cascade.Errorf(cascade.EINVALID, "simConfig: %s cannot be used: %s", name, c.Err)
	}
	return c, nil
}

// CrossArchitecture reports whether the run simulates its trace on another
// architecture than the trace was taken on; false when its config is gone.
func (m *Manager) CrossArchitecture(ctx context.Context, r cascade.Run) (bool, error) {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return false, err
	}
	cfgs, err := m.SimConfigs()
	if err != nil {
		return false, err
	}
	c, ok := simconfig.Find(cfgs, r.SimConfig)
	return ok && simconfig.CrossArchitecture(c, t.TraceGPUArch), nil
}

// checkKernels returns the distinct, sorted kernel ids, all of which the
// trace's kernelslist.g must hold.
func (m *Manager) checkKernels(traceID string, ids []int) ([]int, error) {
	if len(ids) == 0 {
		return nil, cascade.Errorf(cascade.EINVALID, "kernelIds: empty; leave it out to simulate every kernel")
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(traceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return nil, fmt.Errorf("read kernel list: %w", err)
	}
	have := map[int]bool{}
	for _, c := range list.Kernels() {
		if c.KernelOK {
			have[c.Kernel.ID] = true
		}
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if !have[id] {
			return nil, cascade.Errorf(cascade.EINVALID, "kernelIds: %d is not a kernel of trace %q", id, traceID)
		}
	}
	return ids, nil
}

var runIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newRunID returns a short id that sorts by creation time.
func newRunID() string {
	b := make([]byte, 10)
	ts := uint64(time.Now().UnixMilli())
	for i := range 5 {
		b[i] = byte(ts >> (8 * (4 - i)))
	}
	rand.Read(b[5:])
	return "r" + runIDEncoding.EncodeToString(b)
}

// Cancel stops a run: a queued one is cancelled at once, a running one
// once its simulator's process group is gone. It returns CONFLICT for a run
// that is already over.
func (m *Manager) Cancel(ctx context.Context, id string) (cascade.Run, error) {
	if m.slurm != nil {
		return m.slurm.cancel(ctx, id)
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		switch r.State {
		case cascade.RunQueued:
			now := time.Now().UTC()
			r.State, r.FinishedAt = cascade.RunCancelled, &now
			r.History = append(r.History, stamp("cancelled before it started"))
			return nil
		case cascade.RunRunning:
			if r.Slurm.JobID != nil {
				return cascade.Errorf(cascade.ECONFLICT, "run %q is Slurm job %d, and this server runs simulations itself (CASCADE_EXECUTOR=local): restart it with CASCADE_EXECUTOR=slurm to cancel the job", id, *r.Slurm.JobID)
			}
			return cascade.ErrUnchanged
		}
		return cascade.Errorf(cascade.ECONFLICT, "run %q is %s already", id, strings.ToLower(string(r.State)))
	})
	if err != nil {
		return r, err
	}
	if saved {
		m.queue.Cancel(id)
		m.log.Info("run cancelled", "run", id)
		m.publish(r)
		return r, nil
	}
	m.queue.Cancel(id)
	return r, nil
}

// RemoveTrace ends and deletes the runs of a trace whose directory left
// the bucket: queued ones are cancelled so no worker starts them, running
// ones are stopped and waited for until their simulator is gone, then
// every run of the trace, finished ones too, is deleted with its work
// directory, and RunRemoved is published for each. A run launched while it
// works is removed too. After an error it can be called again.
func (m *Manager) RemoveTrace(ctx context.Context, traceID string) error {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	rs, err := m.cfg.Store.TraceRuns(ctx, traceID)
	if err != nil {
		return fmt.Errorf("list runs of trace %s: %w", traceID, err)
	}
	if len(rs) == 0 {
		return nil
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
		if err := m.stop(ctx, r.ID); err != nil {
			return fmt.Errorf("stop run %s: %w", r.ID, err)
		}
	}
	if err := m.cfg.Store.DeleteRuns(ctx, ids); err != nil {
		return fmt.Errorf("delete runs of trace %s: %w", traceID, err)
	}
	for _, id := range ids {
		if err := os.RemoveAll(m.runDir(id)); err != nil {
			m.log.Warn("remove run directory", "run", id, "err", err)
		}
		m.log.Info("run removed with its trace", "run", id, "trace", traceID)
		m.cfg.Events.Publish(cascade.RunRemoved{ID: id, TraceID: traceID})
	}
	return nil
}

// stop ends a run that is queued or running, for RemoveTrace: a queued
// one is committed cancelled, so no worker starts it, and one a worker has
// taken is stopped and waited for.
func (m *Manager) stop(ctx context.Context, id string) error {
	r, _, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunQueued {
			return cascade.ErrUnchanged
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt = cascade.RunCancelled, &now
		r.History = append(r.History, stamp("cancelled: its trace was removed"))
		return nil
	})
	if err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
		return err
	}
	m.mu.Lock()
	a := m.running[id]
	if a != nil {
		a.removed.Store(true)
	}
	m.mu.Unlock()
	m.queue.Cancel(id)
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if m.slurm != nil && err == nil {
		m.slurm.forget(ctx, id, r.Slurm.JobID)
	}
	return nil
}

func stamp(msg string) string { return time.Now().UTC().Format(time.RFC3339) + " " + msg }

func (m *Manager) publish(r cascade.Run) { m.cfg.Events.Publish(cascade.RunUpdated{Run: r}) }

// Run requeues runs a previous server left running (they run again from
// the beginning, and their history says so), queues the queued ones in
// launch order, and executes runs until ctx is done. Runs still running
// then are stopped and left running in the database for the next start.
// The Slurm executor instead reattaches to the jobs of the runs it had
// submitted, and follows them until ctx is done; they keep running.
// Runs that are Slurm jobs are left as they are by a local executor.
func (m *Manager) Run(ctx context.Context) error {
	running, err := m.cfg.Store.RunsInState(ctx, cascade.RunRunning)
	if err != nil {
		return fmt.Errorf("load runs: %w", err)
	}
	var jobs []cascade.Run // runs with a Slurm job, to reattach
	for _, r := range running {
		if r.Slurm.JobID != nil {
			jobs = append(jobs, r)
			continue
		}
		r, saved, err := m.cfg.Store.UpdateRun(ctx, r.ID, func(r *cascade.Run) error {
			if r.State != cascade.RunRunning {
				return cascade.ErrUnchanged // removed with its trace meanwhile
			}
			r.State, r.StartedAt, r.KernelsDone = cascade.RunQueued, nil, 0
			r.History = append(r.History, stamp("the server restarted while this run was running; it runs again from the beginning"))
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
	var waiting []string // queued runs without a job, in launch order
	for _, r := range queued {
		if r.Slurm.JobID != nil {
			jobs = append(jobs, r)
		} else {
			waiting = append(waiting, r.ID)
		}
	}
	m.ctx = ctx // before the queue starts any work
	if m.slurm != nil {
		return m.slurm.run(ctx, jobs, waiting)
	}
	for _, r := range jobs {
		m.log.Warn("run is a Slurm job, which this server does not follow; restart with CASCADE_EXECUTOR=slurm to follow it",
			"run", r.ID, "job", *r.Slurm.JobID, "state", r.State)
	}
	m.Enqueue(waiting...)
	m.queue.Run(ctx)
	return nil
}

// execute runs one queued run to its end; it is the queue's work. runCtx
// ends when the run is cancelled (cause [workqueue.ErrCancelled]) or the
// server stops; the run's rows are written with a context that ends only
// with the server.
func (m *Manager) execute(runCtx context.Context, id string) {
	// The queue knows the run from before RUNNING is committed: a Cancel
	// that reads RUNNING always reaches it.
	ctx := m.ctx
	a, untrack := m.track(id)
	defer untrack()

	r, started, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunQueued {
			return cascade.ErrUnchanged // cancelled while it waited
		}
		now := time.Now().UTC()
		r.State, r.StartedAt, r.Error, r.KernelsDone = cascade.RunRunning, &now, nil, 0
		r.StatCounters = statCounters(m.cfg.StatsTable)
		return nil
	})
	if err != nil || !started {
		if err != nil && ctx.Err() == nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			m.log.Error("start run", "run", id, "err", err)
		}
		return
	}
	m.log.Info("run started", "run", id, "trace", r.TraceID, "config", r.SimConfig)
	m.publish(r)
	if runCtx.Err() != nil { // cancelled while it started
		if ctx.Err() == nil && !a.removed.Load() {
			m.finish(ctx, id, nil, cascade.RunCancelled, "")
		}
		return
	}

	job, total, err := m.prepare(r)
	if err != nil {
		if !a.removed.Load() {
			m.finish(ctx, id, nil, cascade.RunFailed, err.Error())
		}
		return
	}
	m.progress(ctx, id, nil, simlog.Progress{Total: total})
	f := newFollower(m, ctx, id, job.Log, total)
	job.Grew = f.grew
	exit, err := m.local.Execute(runCtx, job)
	parser := f.finish()
	var logErr *proc.LogError
	switch {
	case ctx.Err() != nil:
		return // shutdown: the run stays running and is redone on the next start
	case a.removed.Load():
		return // its trace is gone, and the run with it
	case runCtx.Err() != nil:
		m.finish(ctx, id, parser, cascade.RunCancelled, "")
	case errors.As(err, &logErr):
		m.finish(ctx, id, parser, cascade.RunFailed, m.logFailure(logErr))
	case errors.Is(err, ErrSimulatorNotFound):
		m.finish(ctx, id, parser, cascade.RunFailed, fmt.Sprintf("%v. Set CASCADE_SIM_CMD to Accel-Sim's accel-sim.out (or the stand-in simulator, see README)", err))
	case err != nil:
		m.finish(ctx, id, parser, cascade.RunFailed, "simulator: "+err.Error())
	default:
		o := parser.Outcome(exit)
		switch {
		case o.Succeeded:
			m.finish(ctx, id, parser, cascade.RunSucceeded, "")
		case o.Failure == simlog.FailureTraceFormat:
			m.finish(ctx, id, parser, cascade.RunFailed, o.Reason+". "+traceFormatFix(r.TraceID))
		default:
			m.finish(ctx, id, parser, cascade.RunFailed, o.Reason)
		}
	}
}

// prepare makes the run's directory and kernel list and finds its config.
func (m *Manager) prepare(r cascade.Run) (Job, int, error) {
	dir := m.runDir(r.ID)
	if err := os.RemoveAll(dir); err != nil {
		return Job{}, 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Job{}, 0, err
	}
	cfg, err := m.config(r.SimConfig)
	if err != nil {
		return Job{}, 0, errors.New(cascade.ErrorMessage(err))
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(r.TraceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return Job{}, 0, err
	}
	if len(r.KernelIDs) > 0 {
		refs := make([]kernellist.Ref, len(r.KernelIDs))
		for i, id := range r.KernelIDs {
			refs[i] = kernellist.Ref{ID: id}
		}
		if list, err = kernellist.WriteSubset(list, dir, refs); err != nil {
			return Job{}, 0, err
		}
	}
	if err := linkConfigFolders(dir, cfg, filepath.Base(m.LogPath(r.ID))); err != nil {
		return Job{}, 0, err
	}
	return Job{Run: r, Dir: dir, KernelList: list.Path, Config: cfg, Log: m.LogPath(r.ID)}, len(list.Kernels()), nil
}

// kernelTotal is how many kernels the run simulates: its subset's, or its
// trace's kernel list's; 0 when the list cannot be read.
func (m *Manager) kernelTotal(id string) int {
	r, err := m.cfg.Store.Run(m.ctx, id)
	if err != nil {
		return 0
	}
	if len(r.KernelIDs) > 0 {
		return len(r.KernelIDs)
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(r.TraceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return 0
	}
	return len(list.Kernels())
}

// progress records the parser's progress and kernel results.
func (m *Manager) progress(ctx context.Context, id string, kernels []cascade.RunKernel, p simlog.Progress) {
	if kernels != nil {
		if err := m.cfg.Store.SaveRunKernels(ctx, id, kernels); err != nil {
			m.log.Error("save run kernels", "run", id, "err", err)
		}
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunRunning || (r.KernelsDone == p.Done && r.KernelsTotal == p.Total) {
			return cascade.ErrUnchanged
		}
		r.KernelsDone, r.KernelsTotal = p.Done, p.Total
		return nil
	})
	if err == nil && saved {
		m.publish(r)
	}
}

// finish records a run's end and its results.
func (m *Manager) finish(ctx context.Context, id string, p *simlog.Parser, state cascade.RunState, msg string) {
	m.finishWith(ctx, id, p, state, msg, nil)
}

// finishWith is finish, with more changes to the run made by also (when
// not nil) in the same write. A run that is over already stays as it was.
func (m *Manager) finishWith(ctx context.Context, id string, p *simlog.Parser, state cascade.RunState, msg string, also func(r *cascade.Run)) {
	if p != nil {
		if err := m.cfg.Store.SaveRunKernels(ctx, id, p.Kernels()); err != nil {
			m.log.Error("save run kernels", "run", id, "err", err)
		}
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.ErrUnchanged
		}
		now := time.Now().UTC()
		if p != nil {
			r.KernelsDone = p.Progress().Done
		}
		if msg != "" {
			r.Error = &msg
		}
		switch {
		case state == cascade.RunCancelled && r.State == cascade.RunQueued:
			r.History = append(r.History, stamp("cancelled before it started"))
		case state == cascade.RunCancelled:
			r.History = append(r.History, stamp("cancelled while running"))
		}
		r.State, r.FinishedAt = state, &now
		recordEnd(r, p)
		if also != nil {
			also(r)
		}
		return nil
	})
	if err != nil {
		if cascade.ErrorCode(err) != cascade.ENOTFOUND {
			m.log.Error("finish run", "run", id, "err", err)
		}
		return
	}
	if !saved {
		return
	}
	if msg != "" {
		m.log.Warn("run "+strings.ToLower(string(state)), "run", id, "error", msg)
	} else {
		m.log.Info("run "+strings.ToLower(string(state)), "run", id)
	}
	m.publish(r)
	if m.cfg.Ended != nil {
		m.cfg.Ended(r)
	}
}
