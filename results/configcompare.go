package results

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/runs"
)

// ConfigComparison compares the runs of a trace config by config, configs
// in name order, one entry for each config with any run of the trace.
// Each config's figures are those of its latest succeeded run (a sampled
// run only when it has no other: see preferred), computed
// by [Reader.Read] (cached); failed, cancelled, running and queued runs
// are counted, never averaged in. The segments of sampled runs take no
// part: their sampled run does.
func (m *Reader) ConfigComparison(ctx context.Context, traceID string) ([]cascade.ConfigComparison, error) {
	out, _, err := m.configComparison(ctx, traceID)
	return out, err
}

// configComparison is ConfigComparison with the results of each config's
// run (zero without one), in the same order.
func (m *Reader) configComparison(ctx context.Context, traceID string) ([]cascade.ConfigComparison, []Results, error) {
	out, err := m.configRuns(ctx, traceID)
	if err != nil {
		return nil, nil, err
	}
	results := make([]Results, len(out))
	for i := range out {
		c := &out[i]
		if c.Run != nil {
			res, err := m.Read(ctx, *c.Run)
			if err != nil {
				return nil, nil, fmt.Errorf("config comparison of %s: results of %s: %w", traceID, c.Run.ID, err)
			}
			c.Comparison, results[i] = res.Comparison, res
		}
	}
	return out, results, nil
}

// configRuns is ConfigComparison without the comparisons: each config's
// run that stands for it, and its runs counted by state, read from the
// trace's runs alone.
func (m *Reader) configRuns(ctx context.Context, traceID string) ([]cascade.ConfigComparison, error) {
	rs, err := m.cfg.Store.TraceRuns(ctx, traceID)
	if err != nil {
		return nil, fmt.Errorf("config comparison of %s: %w", traceID, err)
	}
	by := map[string]*cascade.ConfigComparison{}
	var names []string
	for _, r := range rs {
		if r.SampledByID != nil {
			continue // a part of its sampled run, which counts
		}
		c := by[r.SimConfig]
		if c == nil {
			c = &cascade.ConfigComparison{SimConfig: r.SimConfig}
			by[r.SimConfig] = c
			names = append(names, r.SimConfig)
		}
		c.Runs++
		switch r.State {
		case cascade.RunSucceeded:
			c.Succeeded++
			if c.Run == nil || preferred(r, *c.Run) {
				c.Run = &r
			}
		case cascade.RunFailed:
			c.Failed++
		case cascade.RunCancelled:
			c.Cancelled++
		case cascade.RunRunning:
			c.Running++
		case cascade.RunQueued:
			c.Queued++
		}
	}
	slices.Sort(names)
	out := make([]cascade.ConfigComparison, len(names))
	for i, name := range names {
		out[i] = *by[name]
	}
	return out, nil
}

// preferred reports whether succeeded run r stands for its config before
// succeeded run o: a simulated run before a sampled one (which is
// projected from its representatives), else the later.
func preferred(r, o cascade.Run) bool {
	if (r.Sampling == nil) != (o.Sampling == nil) {
		return r.Sampling == nil
	}
	return r.Seq > o.Seq
}

// ConfigComparisonKernels is a page of a trace's kernels, each with its
// error under each config of [Reader.ConfigComparison], in that order.
// The kernels are those any config's run compared or simulated, by kernel
// id and context; p.After is the cursor ([cascade.Cursor]) of a kernel's
// Seq. The aligned list is kept for the last few versions of the runs it
// joins, so paging through a large trace joins it once.
func (m *Reader) ConfigComparisonKernels(ctx context.Context, traceID string, p cascade.Page) ([]cascade.ConfigComparison, cascade.PageOf[cascade.ConfigKernelErrors], error) {
	var page cascade.PageOf[cascade.ConfigKernelErrors]
	limit, err := p.Limit()
	if err != nil {
		return nil, page, err
	}
	after, hasAfter, err := cascade.ParseCursor(p.After)
	if err != nil {
		return nil, page, err
	}
	cs, results, err := m.configComparison(ctx, traceID)
	if err != nil {
		return nil, page, err
	}
	t, err := m.cfg.Store.Trace(ctx, traceID)
	if err != nil {
		return nil, page, err
	}
	// A run's results change with its row or its trace's (see Results).
	var key strings.Builder
	fmt.Fprint(&key, traceID, "@", t.UpdatedAt.UnixNano())
	for _, c := range cs {
		if c.Run != nil {
			fmt.Fprint(&key, "|", c.Run.ID, "@", c.Run.UpdatedAt.UnixNano())
		} else {
			fmt.Fprint(&key, "|", c.SimConfig, "-")
		}
	}
	aligned := m.aligned.GetOrPut(key.String(), func() []cascade.ConfigKernelErrors { return alignKernels(results) })
	start := 0
	if hasAfter {
		start = int(min(max(after+1, 0), int64(len(aligned))))
	}
	end := min(start+limit, len(aligned))
	page.Items, page.HasNext = aligned[start:end], end < len(aligned)
	if p.Count {
		page.Total = int64(len(aligned))
	}
	return cs, page, nil
}

// maxCachedAligned bounds the aligned kernel lists kept.
const maxCachedAligned = 8

// alignKernels joins the kernels of each config's results by kernel id and
// context, ordered by them.
func alignKernels(results []Results) []cascade.ConfigKernelErrors {
	at := map[kernelRef]int{}
	var out []cascade.ConfigKernelErrors
	for i, res := range results {
		for _, k := range res.Kernels {
			if k.KernelID == nil {
				continue
			}
			r := kernelRef{*k.KernelID, cascade.Deref(k.Context)}
			j, ok := at[r]
			if !ok {
				j = len(out)
				at[r] = j
				out = append(out, cascade.ConfigKernelErrors{KernelID: r.id, Context: k.Context, Name: k.Name,
					Errors: make([]*float64, len(results)), Cycles: make([]*int64, len(results))})
			}
			if k.ErrorPct != nil {
				out[j].Errors[i] = k.ErrorPct
			}
			out[j].Cycles[i] = &k.SimCycles
		}
	}
	slices.SortFunc(out, func(a, b cascade.ConfigKernelErrors) int {
		return cmp.Or(cmp.Compare(a.KernelID, b.KernelID), cmp.Compare(cascade.Deref(a.Context), cascade.Deref(b.Context)))
	})
	for i := range out {
		out[i].Seq = i
	}
	return out
}

// SweepGrid is a sweep's cells, trace by trace in the sweep's order, each
// trace's configs in the sweep's order. A succeeded run's comparison is
// computed as for its own results ([Reader.Read]), each trace's timing
// files read once a call, and kept by run and version (a grid is asked for
// again on every run's change, and a sweep may hold 10,000 runs).
func (m *Reader) SweepGrid(ctx context.Context, id string) ([]cascade.SweepCell, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	rs, err := m.cfg.Store.SweepRuns(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("grid of sweep %s: %w", id, err)
	}
	type cell struct{ trace, config string }
	latest := map[cell]cascade.Run{}
	count := map[cell][2]int{} // runs, succeeded
	for _, r := range rs {
		k := cell{r.TraceID, r.SimConfig}
		n := count[k]
		n[0]++
		if r.State == cascade.RunSucceeded {
			n[1]++
		}
		count[k] = n
		if l, ok := latest[k]; !ok || r.Seq > l.Seq {
			latest[k] = r
		}
	}
	g := &gridTimings{m: m, traces: map[string]*gridTrace{}}
	out := make([]cascade.SweepCell, 0, len(s.TraceIDs)*len(s.SimConfigs))
	for _, tr := range s.TraceIDs {
		for _, cfg := range s.SimConfigs {
			k := cell{tr, cfg}
			c := cascade.SweepCell{TraceID: tr, SimConfig: cfg, Runs: count[k][0], Succeeded: count[k][1]}
			if r, ok := latest[k]; ok {
				c.Run = &r
				if r.State == cascade.RunSucceeded {
					if c.Comparison, err = g.comparison(ctx, r); err != nil {
						return nil, fmt.Errorf("grid of sweep %s: comparison of %s: %w", id, r.ID, err)
					}
				}
			} else {
				c.Runs = 1 // the sweep launched one; it is gone with its trace
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// maxCachedComparisons bounds the run comparisons SweepGrid keeps: a
// large sweep's, twice over.
const maxCachedComparisons = 2 * runs.MaxSweepRuns

// gridTrace is a trace as one SweepGrid call reads it.
type gridTrace struct {
	t      cascade.Trace
	timing *traceTiming // read at the first run not in the cache
}

// gridTimings reads each trace, its timing files and the configs once a
// SweepGrid, and only for runs not in the cache.
type gridTimings struct {
	m      *Reader
	traces map[string]*gridTrace
	cfgs   []cascade.SimConfig // nil until read
}

// comparison is the succeeded run r's comparison, from the cache when r
// and its trace are as they were.
func (g *gridTimings) comparison(ctx context.Context, r cascade.Run) (*cascade.RunComparison, error) {
	gt := g.traces[r.TraceID]
	if gt == nil {
		t, err := g.m.cfg.Store.Trace(ctx, r.TraceID)
		if err != nil {
			return nil, err
		}
		gt = &gridTrace{t: t}
		g.traces[r.TraceID] = gt
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano(), "@", gt.t.UpdatedAt.UnixNano())
	if c, ok := g.m.comparisons.Get(key); ok {
		return c, nil
	}
	if gt.timing == nil {
		tt := g.m.timing(ctx, gt.t)
		gt.timing = &tt
	}
	var c *cascade.RunComparison
	if gt.timing.measured != nil {
		kernels, err := g.m.cfg.Store.RunKernels(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		if g.cfgs == nil { // a config that is gone has no clock, as for runConfig
			g.cfgs, _ = g.m.cfg.Configs.SimConfigs()
			if g.cfgs == nil {
				g.cfgs = []cascade.SimConfig{}
			}
		}
		cfg, _ := simconfig.Find(g.cfgs, r.SimConfig)
		c = gt.timing.results(kernels, cfg).Comparison
	}
	g.m.comparisons.Put(key, c)
	return c, nil
}
