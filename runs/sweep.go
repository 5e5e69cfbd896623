package runs

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
)

// Sweeps launches and cancels sweeps: sets of runs launched together,
// checked as a whole and stored in one transaction, through its Manager's
// lifecycle (the runs are queued, run and cancelled as any run is).
type Sweeps struct{ m *Manager }

// NewSweeps returns the sweeps of m's runs.
func NewSweeps(m *Manager) *Sweeps { return &Sweeps{m: m} }

// MaxSweepRuns bounds the runs one sweep launches (traces × configs).
const MaxSweepRuns = 10_000

// SweepInput is a sweep a user asks for: every trace under every config,
// or, with Axes, under every cell of the grid of base configs × the axes'
// values (see [cascade.SweepAxis]).
type SweepInput struct {
	TraceIDs   []string
	SimConfigs []string // config or variant names; with Axes, the bases
	Axes       []cascade.SweepAxis
	Label      string
	// Rerun simulates every run; without it a run whose simulation a
	// succeeded run did already reuses that run's results, as
	// [Manager.Launch] does.
	Rerun bool
}

// LaunchSweep checks a sweep as a whole and, when nothing is wrong with
// it, stores it and its runs (one per trace and config, trace by trace)
// queued in one transaction, then queues them for the executor (the Slurm
// executor submits them after the transaction, a few at a time). When
// anything is wrong nothing is stored, and the BAD_USER_INPUT error names
// every refusal: an empty or too long list, an id or name given twice, a
// trace that is not there, not ready or the sample, a config that is
// unknown or unusable, one the executor cannot start jobs under, or a
// variant the simulator refuses or cannot be run to check.
func (w *Sweeps) LaunchSweep(ctx context.Context, in SweepInput) (cascade.Sweep, error) {
	w.m.launchMu.Lock()
	s, rs, err := w.newSweep(ctx, in)
	if err == nil {
		err = w.storeSweep(ctx, &s, rs)
	}
	w.m.launchMu.Unlock()
	if err != nil {
		return cascade.Sweep{}, err
	}
	w.queueSweep(rs)
	return s, nil
}

// storeSweep stores a sweep and its runs, the kernels of reused runs
// first: a reused run is never seen SUCCEEDED without them.
func (w *Sweeps) storeSweep(ctx context.Context, s *cascade.Sweep, rs []cascade.Run) error {
	if err := w.m.copyKernels(ctx, rs); err != nil {
		return err
	}
	start := time.Now()
	err := w.m.cfg.Store.CreateSweep(ctx, s, rs)
	w.m.log.Info("sweep queued", "sweep", s.ID, "runs", len(rs), "traces", len(s.TraceIDs), "configs", len(s.SimConfigs), "stored_in", time.Since(start))
	return err
}

// queueSweep publishes a stored sweep's runs and queues those to
// simulate.
func (w *Sweeps) queueSweep(rs []cascade.Run) {
	queue := make([]cascade.Run, 0, len(rs))
	for _, r := range rs {
		if r.State == cascade.RunQueued && !r.Coordinated() {
			queue = append(queue, r)
		}
		w.m.publish(r)
	}
	w.m.enqueue(queue...)
}

// CheckSweep checks a sweep as LaunchSweep does and returns it, not
// stored, with its cells: the config of each of its SimConfigs, in
// order. A [Coordinator] launches the runs of such a sweep its own way
// (see [Sweeps.LaunchSweepRuns]).
func (w *Sweeps) CheckSweep(ctx context.Context, in SweepInput) (cascade.Sweep, []cascade.SimConfig, error) {
	s, rs, err := w.newSweep(ctx, in)
	if err != nil {
		return s, nil, err
	}
	cells := make([]cascade.SimConfig, len(s.SimConfigs))
	for i := range cells {
		r := rs[i] // the first trace's runs, one per cell
		cells[i] = cascade.SimConfig{Name: r.SimConfig, Base: r.ConfigBase, Params: r.ConfigParams}
	}
	return s, cells, nil
}

// LaunchSweepRuns stores sweep s (from CheckSweep) with runs checked as
// [Manager.LaunchRuns] checks them, shaped by shape, in one transaction,
// then queues them: the runs that are not segments are the sweep's.
func (w *Sweeps) LaunchSweepRuns(ctx context.Context, s cascade.Sweep, ins []LaunchInput, shape func(rs []cascade.Run) error) (cascade.Sweep, []cascade.Run, error) {
	w.m.launchMu.Lock()
	rs, err := w.m.newRuns(ctx, ins, shape)
	if err == nil {
		err = w.storeSweep(ctx, &s, rs)
	}
	w.m.launchMu.Unlock()
	if err != nil {
		return cascade.Sweep{}, nil, err
	}
	w.queueSweep(rs)
	return s, rs, nil
}

// newSweep checks a sweep and returns it and its runs, not stored.
func (w *Sweeps) newSweep(ctx context.Context, in SweepInput) (cascade.Sweep, []cascade.Run, error) {
	var refusals []string
	refuse := func(format string, a ...any) { refusals = append(refusals, fmt.Sprintf(format, a...)) }
	if len(in.TraceIDs) == 0 {
		refuse("traceIds: empty; a sweep needs at least one trace")
	}
	if len(in.SimConfigs) == 0 {
		refuse("simConfigs: empty; a sweep needs at least one config")
	}
	grid := gridSize(in)
	if n := new(big.Int).Mul(big.NewInt(int64(len(in.TraceIDs))), grid); tooMany(n) {
		refuse("too many runs: %s × %s = %s; a sweep launches at most %d",
			count(big.NewInt(int64(len(in.TraceIDs))), "trace"), count(grid, "config"), n, MaxSweepRuns)
	}
	seen := map[string]int{}
	for i, id := range in.TraceIDs {
		if j, ok := seen[id]; ok {
			refuse("traceIds[%d]: %q is given twice (also traceIds[%d])", i, id, j)
			continue
		}
		seen[id] = i
		t, err := w.m.cfg.Store.Trace(ctx, id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			refuse("traceIds[%d]: trace %q not found", i, id)
		case err != nil:
			return cascade.Sweep{}, nil, err
		case t.Sample:
			refuse("traceIds[%d]: %q is the sample trace, which has no instruction traces", i, id)
		case t.State != cascade.TraceReady:
			refuse("traceIds[%d]: trace %q %s; runs launch on ready traces", i, id, t.State.Is())
		case w.m.configs.NotSimulatable(t) != "":
			refuse("traceIds[%d]: %s", i, w.m.configs.NotSimulatable(t))
		}
	}
	cells, problems := w.sweepCells(ctx, in)
	refusals = append(refusals, problems...)
	if len(refusals) > 0 {
		noun := "problem"
		if len(refusals) > 1 {
			noun = "problems"
		}
		return cascade.Sweep{}, nil, cascade.Errorf(cascade.EINVALID, "sweep refused, nothing queued (%d %s): %s", len(refusals), noun, strings.Join(refusals, "; "))
	}
	names := make([]string, len(cells))
	for i, c := range cells {
		names[i] = c.Name
	}
	s := cascade.Sweep{
		ID: cascade.NewID(cascade.SweepIDPrefix), TraceIDs: in.TraceIDs, SimConfigs: names, Axes: in.Axes, Executor: w.m.exec.Name(),
	}
	if in.Label != "" {
		s.Label = &in.Label
	}
	rs := make([]cascade.Run, 0, len(in.TraceIDs)*len(cells))
	var reused reuseCache
	for _, t := range in.TraceIDs {
		for _, cfg := range cells {
			r := cascade.Run{
				ID: cascade.NewID(cascade.RunIDPrefix), TraceID: t, SimConfig: cfg.Name, Label: s.Label,
				ConfigBase: cfg.Base, ConfigParams: cfg.Params,
				State: cascade.RunQueued, Executor: s.Executor, History: []string{},
			}
			if !in.Rerun {
				orig, err := w.m.reusable(ctx, r, cfg, false, &reused)
				if err != nil {
					return cascade.Sweep{}, nil, err
				}
				if orig != nil {
					reuse(&r, *orig)
				}
			}
			rs = append(rs, r)
		}
	}
	return s, rs, nil
}

// gridSize is how many configs a sweep's grid has, exactly: seven axes
// of 1000 values are 10^21 cells, past what an int holds.
func gridSize(in SweepInput) *big.Int {
	n := big.NewInt(int64(len(in.SimConfigs)))
	for _, a := range in.Axes {
		n.Mul(n, big.NewInt(int64(max(len(a.Values), 1))))
	}
	return n
}

// tooMany says whether n runs are more than a sweep launches.
func tooMany(n *big.Int) bool { return n.Cmp(big.NewInt(MaxSweepRuns)) > 0 }

// count is n things: "1 trace", "2 traces".
func count(n *big.Int, thing string) string {
	if n.IsInt64() && n.Int64() == 1 {
		return "1 " + thing
	}
	return n.String() + " " + thing + "s"
}

// sweepCells resolves a sweep's grid into the configs its runs launch
// with, each checked as a launch checks its config, the variants by the
// simulator together (those that resolved, whatever the others' problems);
// the problems name each refused cell's field.
func (w *Sweeps) sweepCells(ctx context.Context, in SweepInput) ([]cascade.SimConfig, []string) {
	var problems []problem
	if tooMany(gridSize(in)) {
		return nil, nil // refused for its size already
	}
	seen := map[string]int{}
	twice := map[int]bool{}
	for i, name := range in.SimConfigs {
		if j, ok := seen[name]; ok {
			problems = append(problems, problem{field: fmt.Sprintf("simConfigs[%d]", i), why: fmt.Sprintf("%q is given twice (also simConfigs[%d])", name, j)})
			twice[i] = true
		}
		seen[name] = i
	}
	grid, bad := expandGrid(in.SimConfigs, in.Axes, twice)
	if len(bad) > 0 {
		out := make([]string, 0, len(problems)+len(bad))
		for _, p := range problems {
			out = append(out, p.String())
		}
		return nil, append(out, bad...)
	}
	r, err := w.m.configs.newResolver()
	if err != nil {
		return nil, []string{err.Error()}
	}
	cells := make([]cascade.SimConfig, 0, len(grid))
	fields := make([]string, 0, len(grid))
	named := map[string]string{}
	for _, g := range grid {
		v, why := r.resolve(g.Name, g.Params)
		if why != "" {
			problems = append(problems, problem{field: g.Field, why: why})
			continue
		}
		if f, ok := named[v.Name]; ok {
			problems = append(problems, problem{field: g.Field, why: fmt.Sprintf("%s is given twice (also %s)", v.Name, f)})
			continue
		}
		named[v.Name] = g.Field
		if err := w.m.exec.CheckConfig(v); err != nil {
			problems = append(problems, problem{field: g.Field, subject: v.Name, why: err.Error()})
			continue
		}
		cells, fields = append(cells, v), append(fields, g.Field)
	}
	// The cells that resolved are asked of the simulator even when others
	// did not: a simulator that cannot be run is said with the rest.
	refusals, err := w.m.configs.CheckVariants(ctx, cells)
	var u *unrunnable
	switch {
	case errors.As(err, &u):
		for i, c := range cells {
			if c.IsVariant() {
				problems = append(problems, problem{field: fields[i], subject: c.Name, why: u.why()})
			}
		}
		return nil, mergeProblems(problems)
	case err != nil:
		return nil, append(mergeProblems(problems), err.Error())
	}
	if byAxis := optionRefusals(in.Axes, cells, refusals); len(byAxis) > 0 {
		return nil, append(mergeProblems(problems), byAxis...)
	}
	for i, why := range refusals {
		if why != "" {
			problems = append(problems, problem{field: fields[i], subject: cells[i].Name, why: "the simulator refuses it: " + why})
		}
	}
	return cells, mergeProblems(problems)
}

// CancelSweep cancels every run of a sweep that is not over: the queued
// ones without a job in one transaction, then the others through the
// executor, all at once (the Slurm executor cancels thousands of jobs with
// a few scancel calls; a running one ends once its simulator or job is
// gone). It returns NOT_FOUND for an unknown sweep, and CONFLICT for one
// whose runs are all over, as [Manager.Cancel] does for a run; a run this
// server's executor cannot cancel is no error.
func (w *Sweeps) CancelSweep(ctx context.Context, id string) (cascade.Sweep, error) {
	m := w.m
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return s, err
	}
	queued, err := m.cfg.Store.CancelQueuedSweepRuns(ctx, id, Stamp("cancelled with its sweep before it started"))
	if err != nil {
		return s, err
	}
	for _, r := range queued {
		m.queue.Cancel(r.ID)
		m.publish(r)
	}
	rest, err := m.cfg.Store.SweepRuns(ctx, id, cascade.RunQueued, cascade.RunRunning)
	if err != nil {
		return s, err
	}
	if len(queued) == 0 && len(rest) == 0 {
		return s, cascade.Errorf(cascade.ECONFLICT, "sweep %q is already over: none of its runs is queued or running", id)
	}
	var started []cascade.Run
	for _, r := range rest {
		if r.State == cascade.RunRunning || r.HasJob() {
			started = append(started, r)
		}
	}
	_, err = m.exec.Cancel(ctx, started)
	m.log.Info("sweep cancelled", "sweep", id, "queued", len(queued), "started", len(started))
	return s, withoutConflicts(err)
}
