package results

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
)

// SweepComparison pools, for each config of a sweep in its order, the
// results of its succeeded runs (see [cascade.SweepConfigComparison]):
// each run's kernels joined with its trace's measured times as for a
// run's own results ([Reader.Read]). A succeeded run's results are
// computed once and added to its config's pool, which the last few
// sweeps' keep; the pools start again when a run they hold has changed or
// is gone, or when a run that succeeded since is of a trace whose row (its
// timing flags) changed since its timing files were read for the pools.
func (m *Reader) SweepComparison(ctx context.Context, id string) ([]cascade.SweepConfigComparison, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	t := m.sweepTallies.GetOrPut(id, newSweepTally)
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
func (m *Reader) addSucceeded(ctx context.Context, t *sweepTally, rs []cascade.Run) error {
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
		tt := m.timing(ctx, tr)
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
	cfgs, cfgsErr := m.cfg.Configs.SimConfigs()
	for _, r := range rs {
		tt, err := timing(r.TraceID)
		if err != nil {
			return err
		}
		t.traces[r.TraceID] = versions[r.TraceID]
		var res Results
		if tt.measured != nil || tt.timeline != nil {
			kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
			if err != nil {
				return err
			}
			cfg, _ := recordedConfig(cfgs, cfgsErr, "", r)
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
