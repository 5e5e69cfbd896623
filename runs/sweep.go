package runs

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// MaxSweepRuns bounds the runs one sweep launches (traces × configs).
const MaxSweepRuns = 10_000

// SweepInput is a sweep a user asks for: every trace under every config.
type SweepInput struct {
	TraceIDs   []string
	SimConfigs []string // config names
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
// unknown or unusable, or one the executor cannot start jobs under.
func (m *Manager) LaunchSweep(ctx context.Context, in SweepInput) (cascade.Sweep, error) {
	m.launchMu.Lock()
	s, rs, err := m.newSweep(ctx, in)
	if err == nil {
		// The kernels first: a reused run is never seen SUCCEEDED without them.
		err = m.copyKernels(ctx, rs)
	}
	if err == nil {
		start := time.Now()
		err = m.cfg.Store.CreateSweep(ctx, &s, rs)
		m.log.Info("sweep queued", "sweep", s.ID, "runs", len(rs), "traces", len(s.TraceIDs), "configs", len(s.SimConfigs), "stored_in", time.Since(start))
	}
	m.launchMu.Unlock()
	if err != nil {
		return cascade.Sweep{}, err
	}
	ids := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.SameAsID == nil {
			ids = append(ids, r.ID)
		}
		m.publish(r)
	}
	m.Enqueue(ids...)
	return s, nil
}

// newSweep checks a sweep and returns it and its runs, not stored.
func (m *Manager) newSweep(ctx context.Context, in SweepInput) (cascade.Sweep, []cascade.Run, error) {
	var refusals []string
	refuse := func(format string, a ...any) { refusals = append(refusals, fmt.Sprintf(format, a...)) }
	if len(in.TraceIDs) == 0 {
		refuse("traceIds: empty; a sweep needs at least one trace")
	}
	if len(in.SimConfigs) == 0 {
		refuse("simConfigs: empty; a sweep needs at least one config")
	}
	if n := len(in.TraceIDs) * len(in.SimConfigs); n > MaxSweepRuns {
		refuse("too many runs: %d traces × %d configs = %d; a sweep launches at most %d", len(in.TraceIDs), len(in.SimConfigs), n, MaxSweepRuns)
	}
	seen := map[string]int{}
	for i, id := range in.TraceIDs {
		if j, ok := seen[id]; ok {
			refuse("traceIds[%d]: %q is given twice (also traceIds[%d])", i, id, j)
			continue
		}
		seen[id] = i
		t, err := m.cfg.Store.Trace(ctx, id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			refuse("traceIds[%d]: trace %q not found", i, id)
		case err != nil:
			return cascade.Sweep{}, nil, err
		case t.Sample:
			refuse("traceIds[%d]: %q is the sample trace, which has no instruction traces", i, id)
		case t.State != cascade.TraceReady:
			refuse("traceIds[%d]: trace %q is %s; runs launch on ready traces", i, id, strings.ToLower(string(t.State)))
		case m.NotSimulatable(t) != "":
			refuse("traceIds[%d]: %s", i, m.NotSimulatable(t))
		}
	}
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.Sweep{}, nil, err
	}
	seen = map[string]int{}
	for i, name := range in.SimConfigs {
		if j, ok := seen[name]; ok {
			refuse("simConfigs[%d]: %q is given twice (also simConfigs[%d])", i, name, j)
			continue
		}
		seen[name] = i
		c, ok := simconfig.Find(cfgs, name)
		switch {
		case !ok:
			refuse("simConfigs[%d]: %s", i, simconfig.Unknown(cfgs, name))
		case !c.Usable():
			refuse("simConfigs[%d]: %s cannot be used: %s", i, name, c.Err)
		default:
			if err := m.exec.CheckConfig(c); err != nil {
				refuse("simConfigs[%d]: %s: %v", i, name, err)
			}
		}
	}
	if len(refusals) > 0 {
		noun := "problem"
		if len(refusals) > 1 {
			noun = "problems"
		}
		return cascade.Sweep{}, nil, cascade.Errorf(cascade.EINVALID, "sweep refused, nothing queued (%d %s): %s", len(refusals), noun, strings.Join(refusals, "; "))
	}
	s := cascade.Sweep{
		ID: "s" + newRunID()[1:], TraceIDs: in.TraceIDs, SimConfigs: in.SimConfigs, Executor: m.exec.Name(),
	}
	if in.Label != "" {
		s.Label = &in.Label
	}
	rs := make([]cascade.Run, 0, len(in.TraceIDs)*len(in.SimConfigs))
	var reused reuseCache
	for _, t := range in.TraceIDs {
		for _, c := range in.SimConfigs {
			r := cascade.Run{
				ID: newRunID(), TraceID: t, SimConfig: c, Label: s.Label,
				State: cascade.RunQueued, Executor: s.Executor, History: []string{},
			}
			if !in.Rerun {
				cfg, _ := simconfig.Find(cfgs, c)
				orig, err := m.reusable(ctx, r, cfg, &reused)
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

// Sweep returns the sweep with the given id, or NOT_FOUND.
func (m *Manager) Sweep(ctx context.Context, id string) (cascade.Sweep, error) {
	return m.cfg.Store.Sweep(ctx, id)
}

// Sweeps returns a page of sweeps, newest first.
func (m *Manager) Sweeps(ctx context.Context, p cascade.Page) (cascade.PageOf[cascade.Sweep], error) {
	return m.cfg.Store.Sweeps(ctx, p)
}

// SweepProgress counts a sweep's runs by state.
func (m *Manager) SweepProgress(ctx context.Context, id string) (cascade.SweepProgress, error) {
	return m.cfg.Store.SweepProgress(ctx, id)
}

// SweepComparison pools, for each config of a sweep in its order, the
// results of its succeeded runs (see [cascade.SweepConfigComparison]):
// each run's kernels joined with its trace's measured times as for a
// run's own results ([Manager.Results]). A succeeded run's results are
// computed once and added to its config's pool, which the last few
// sweeps' keep; the pools start again when a run they hold has changed or
// is gone, or when a run that succeeded since is of a trace whose row (its
// timing flags) changed since its timing files were read for the pools.
func (m *Manager) SweepComparison(ctx context.Context, id string) ([]cascade.SweepConfigComparison, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	t := m.sweepTallies.getOrPut(id, newSweepTally)
	t.mu.Lock() // the runs are read under it, so no caller adds older ones
	defer t.mu.Unlock()
	rs, err := m.cfg.Store.SweepRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := m.addSucceeded(ctx, t, rs); err != nil {
		return nil, err
	}
	return t.comparison(s, rs), nil
}

// maxCachedSweeps bounds the sweeps whose pools are kept.
const maxCachedSweeps = 16

// sweepTally is a sweep's comparison so far: the results of the
// succeeded runs it has added, pooled by config. Its mutex makes the
// callers of SweepComparison take turns.
type sweepTally struct {
	mu     sync.Mutex
	added  map[string]time.Time // run id: the run's UpdatedAt when it was added
	traces map[string]time.Time // trace id: the trace's UpdatedAt when its timing was read
	pools  map[string]*pool     // by config
}

func newSweepTally() *sweepTally {
	t := &sweepTally{}
	t.reset()
	return t
}

// reset empties t.
func (t *sweepTally) reset() {
	t.added, t.traces, t.pools = map[string]time.Time{}, map[string]time.Time{}, map[string]*pool{}
}

// addSucceeded adds to t the results of the succeeded runs in rs that it
// has not added, after starting t again if it is stale. Each trace's
// timing files are read once for all its runs.
func (m *Manager) addSucceeded(ctx context.Context, t *sweepTally, rs []cascade.Run) error {
	succeeded := map[string]time.Time{}
	for _, r := range rs {
		if r.State == cascade.RunSucceeded {
			succeeded[r.ID] = r.UpdatedAt
		}
	}
	stale := false
	for id, at := range t.added {
		if v, ok := succeeded[id]; !ok || !v.Equal(at) {
			stale = true
		}
	}
	fresh := func() []cascade.Run {
		var out []cascade.Run
		for _, r := range rs {
			if _, ok := t.added[r.ID]; !ok && r.State == cascade.RunSucceeded {
				out = append(out, r)
			}
		}
		return out
	}
	timings := map[string]*traceTiming{}
	versions := map[string]time.Time{}
	timing := func(traceID string) (*traceTiming, error) {
		if tt, ok := timings[traceID]; ok {
			return tt, nil
		}
		tr, err := m.cfg.Store.Trace(ctx, traceID)
		if err != nil {
			return nil, err
		}
		tt := m.timing(tr)
		timings[traceID], versions[traceID] = &tt, tr.UpdatedAt
		return &tt, nil
	}
	if !stale {
		for _, r := range fresh() {
			if _, err := timing(r.TraceID); err != nil {
				return err
			}
			if at, ok := t.traces[r.TraceID]; ok && !at.Equal(versions[r.TraceID]) {
				stale = true
				break
			}
		}
	}
	if stale {
		t.reset()
	}
	rs = fresh()
	if len(rs) == 0 {
		return nil
	}
	cfgs, cfgsErr := m.SimConfigs()
	for _, r := range rs {
		tt, err := timing(r.TraceID)
		if err != nil {
			return err
		}
		t.traces[r.TraceID] = versions[r.TraceID]
		var res Results
		if tt.rows != nil || tt.timeline != nil {
			kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
			if err != nil {
				return err
			}
			cfg, _ := recordedConfig(cfgs, cfgsErr, r)
			res = tt.results(kernels, cfg)
		}
		p := t.pools[r.SimConfig]
		if p == nil {
			p = &pool{}
			t.pools[r.SimConfig] = p
		}
		p.add(res)
		t.added[r.ID] = r.UpdatedAt
	}
	return nil
}

// comparison is t's figures for the sweep s with the runs rs, configs in
// the sweep's order.
func (t *sweepTally) comparison(s cascade.Sweep, rs []cascade.Run) []cascade.SweepConfigComparison {
	out := make([]cascade.SweepConfigComparison, 0, len(s.SimConfigs))
	at := map[string]int{}
	for _, name := range s.SimConfigs {
		at[name] = len(out)
		out = append(out, cascade.SweepConfigComparison{SimConfig: name})
	}
	for _, r := range rs {
		i, ok := at[r.SimConfig]
		if !ok { // not possible: a sweep's runs use its configs
			i = len(out)
			at[r.SimConfig] = i
			out = append(out, cascade.SweepConfigComparison{SimConfig: r.SimConfig})
		}
		out[i].Runs++
		if r.State == cascade.RunSucceeded {
			out[i].Succeeded++
		}
	}
	for i := range out {
		if p := t.pools[out[i].SimConfig]; p != nil {
			p.fill(&out[i])
		}
	}
	return out
}

// pool is what a sweep's succeeded runs under one config add up to.
type pool struct {
	compared   int     // runs with a comparison
	absErr     float64 // sum of the compared kernels' |ErrorPct|
	xy         moments // the compared kernels' simulated and measured times
	steps      int
	stepAbsErr float64 // sum of the steps' |projected - measured| / measured, in percent
}

// add adds a run's results.
func (p *pool) add(res Results) {
	if res.Comparison != nil {
		p.compared++
		for _, k := range res.Kernels {
			if k.ErrorPct != nil {
				p.absErr += math.Abs(*k.ErrorPct)
				p.xy.add(*k.SimTimeNs, *k.MeasuredNs)
			}
		}
	}
	for _, st := range res.Steps {
		if st.EventsReplaced > 0 && st.MeasuredNs > 0 {
			p.steps++
			p.stepAbsErr += 100 * math.Abs(st.ProjectedNs-st.MeasuredNs) / st.MeasuredNs
		}
	}
}

// fill sets c's figures from p.
func (p *pool) fill(c *cascade.SweepConfigComparison) {
	c.Compared, c.KernelsCompared, c.StepsCompared = p.compared, p.xy.n, p.steps
	if p.xy.n > 0 {
		c.MAPE = cascade.Ptr(p.absErr / float64(p.xy.n))
		c.Correlation = p.xy.pearson()
	}
	if p.steps > 0 {
		c.StepMAPE = cascade.Ptr(p.stepAbsErr / float64(p.steps))
	}
}
