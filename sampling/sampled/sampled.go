// Package sampled coordinates sampled and split runs: a sampled run
// simulates only its plan's representatives (and their warm-up), as runs
// of their own, its segments, and projects every launch of its trace from
// them; a split run simulates every launch, in segments of consecutive
// launches that run in parallel, and stitches their results (split.go,
// splitsettle.go).
//
// A [Coordinator] launches a sampled run and its segments through the run
// lifecycle's exported API (runs.Manager.LaunchRuns), follows the
// segments as the lifecycle tells it of every run it publishes
// ([runs.Coordinator]), and, once all have succeeded, projects the
// trace's launches (package sampling's Project) and stores them as the
// sampled run's kernels. The segments are ordinary runs: they queue, run
// on either executor, are reused, cancelled and restarted as any run is.
// What a sampled run is checked against (a full run of the same trace and
// config) is read by package results.
package sampled

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling"
)

// Store is what a Coordinator reads and writes of the database (*db.DB).
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Run(ctx context.Context, id string) (cascade.Run, error)
	TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error)
	// Segments returns a sampled run's segments, in launch order.
	Segments(ctx context.Context, id string) ([]cascade.Run, error)
	UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error)
	RunKernels(ctx context.Context, runID string) ([]cascade.RunKernel, error)
	RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
	SweepRuns(ctx context.Context, id string, states ...cascade.RunState) ([]cascade.Run, error)
	AppendRunKernels(ctx context.Context, runID string, from int, ks []cascade.RunKernel) error
}

// Plans reads sampling plans (*plans.Service).
type Plans interface {
	// SamplingPlan returns a plan without its strata, or NOT_FOUND.
	SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error)
	// SamplingStrata returns a plan's strata, members and all.
	SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error)
	// Input is what plans of trace t are made from (and projected with):
	// its launches in order, with measured durations.
	Input(ctx context.Context, t cascade.Trace) (sampling.Input, error)
}

// Lifecycle is what a Coordinator asks of the run lifecycle
// (*runs.Manager).
type Lifecycle interface {
	// LaunchRuns checks, stores and queues runs together (see
	// [runs.Manager.LaunchRuns]).
	LaunchRuns(ctx context.Context, ins []runs.LaunchInput, shape func(rs []cascade.Run) error) ([]cascade.Run, error)
	// CancelRuns cancels runs that are not over.
	CancelRuns(ctx context.Context, rs []cascade.Run, history string) error
}

// Executor is what a Coordinator asks of where runs execute
// (runs.ExecutorHandle).
type Executor interface {
	// Slots is how many runs the executor starts at once.
	Slots() int
}

// Sweeps checks a sweep and returns it, not stored, and its cells'
// configs; LaunchSweepRuns stores it with runs as LaunchRuns does
// (*runs.Sweeps).
type Sweeps interface {
	CheckSweep(ctx context.Context, in runs.SweepInput) (cascade.Sweep, []cascade.SimConfig, error)
	LaunchSweepRuns(ctx context.Context, s cascade.Sweep, ins []runs.LaunchInput, shape func(rs []cascade.Run) error) (cascade.Sweep, []cascade.Run, error)
}

// Variants resolves and checks a config's name and overrides
// (*runs.Configs, see [runs.Configs.Variant]).
type Variants interface {
	Variant(ctx context.Context, name string, params []cascade.SimParam) (cascade.SimConfig, error)
}

// Config configures a Coordinator.
type Config struct {
	Runs     Lifecycle
	Executor Executor
	Sweeps   Sweeps
	Variants Variants
	Store    Store
	Plans    Plans
	Events   cascade.Publisher
	Logger   *slog.Logger
	// AtOnce is how many simulators run at once, 0 when the cluster
	// decides (Slurm: all at once, as a plan's wall-time estimate takes
	// it): a sampled run's longest segment is cut for that many
	// (sampling.CutRanges). Nil: Executor.Slots().
	AtOnce func() int
}

// Coordinator launches sampled runs, follows their segments and projects
// them (see the package doc). It is the lifecycle's [runs.Coordinator]:
// give it to runs.Manager.Coordinate. Its methods are safe for concurrent
// use.
type Coordinator struct {
	cfg Config
	log *slog.Logger

	// mu makes settling and cancelling sampled runs take turns (and
	// RemoveTrace wait for them, see Lock).
	mu sync.Mutex
	// started holds the sampled runs known to be running.
	started sync.Map

	// bg is the settling under way, which starts no more once done (the
	// lifecycle is stopping: the next start settles what is left); ctx is
	// Start's.
	bgMu sync.Mutex
	done bool
	bg   sync.WaitGroup
	ctx  context.Context
}

var _ runs.Coordinator = (*Coordinator)(nil)

// New returns a Coordinator.
func New(cfg Config) *Coordinator {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Coordinator{cfg: cfg, log: log.With("component", "sampled")}
}

// Start settles the sampled runs a previous server left unfinished: their
// segments may have ended meanwhile (Slurm jobs), or all succeeded
// before it could project them.
func (c *Coordinator) Start(ctx context.Context, unfinished []cascade.Run) {
	c.bgMu.Lock()
	c.ctx = ctx
	c.bgMu.Unlock()
	for _, r := range unfinished {
		c.settleLater(r.ID)
	}
}

// Stop waits for the settling under way, and lets no more start.
func (c *Coordinator) Stop() {
	c.bgMu.Lock()
	c.done = true
	c.bgMu.Unlock()
	c.bg.Wait()
}

// Lock keeps sampled runs from being settled or cancelled until unlock.
func (c *Coordinator) Lock() (unlock func()) {
	c.mu.Lock()
	return c.mu.Unlock
}

// background runs fn in a goroutine Stop waits for, under Start's
// context; once stopping, fn is dropped.
func (c *Coordinator) background(fn func(ctx context.Context)) {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.done {
		return
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	c.bg.Go(func() { fn(ctx) })
}

// publish tells subscribers of a change of a sampled run.
func (c *Coordinator) publish(r cascade.Run) { c.cfg.Events.Publish(cascade.RunUpdated{Run: r}) }

// InRangeOrder is segs, the segments of a sampled run as stored (in the
// order they were queued: longest first), in the order of ids, the run's
// SegmentIDs (that of its ranges: segment 1 first); segments not in ids
// follow, as they were.
func InRangeOrder(segs []cascade.Run, ids []string) []cascade.Run {
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	out := slices.Clone(segs)
	slices.SortStableFunc(out, func(a, b cascade.Run) int {
		i, iok := at[a.ID]
		j, jok := at[b.ID]
		switch {
		case iok && jok:
			return cmp.Compare(i, j)
		case iok:
			return -1
		case jok:
			return 1
		}
		return 0
	})
	return out
}
