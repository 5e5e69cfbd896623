package results

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/internal/versioned"
	"github.com/cascade-sim/cascade/runs"
)

// Correlator sets runs' statistics against the hardware counters their
// traces' profiles measured (formats.md §9), as Accel-Sim's correlator
// does: run by run ([Correlator.Correlation], the scatter's points
// [Correlator.CounterPairs]), config by config over the runs a [Reader]
// compares ([Correlator.ConfigCorrelation]), and as CSV. It reads through
// its Reader's store and keeps what it computes for the versions of the
// rows it read.
type Correlator struct {
	rd           *Reader
	correlations *versioned.Cache[string, cascade.RunCorrelation] // see Correlation
	// kernelIndexes map traces' kernels to their positions (see kernelIndex).
	kernelIndexes *versioned.Cache[string, map[kernellist.Ref]int]
}

// NewCorrelator returns a Correlator reading what rd reads.
func NewCorrelator(rd *Reader) *Correlator {
	return &Correlator{rd: rd,
		correlations:  versioned.New[string, cascade.RunCorrelation](maxCachedCorrelations),
		kernelIndexes: versioned.New[string, map[kernellist.Ref]int](maxCachedIndexes),
	}
}

// Correlation sets each of r's statistics against what its trace's
// hardware profiles measured of the same kernels (Kernel.counters), with
// the correlator's figures ([cascade.StatCorrelation]), statistics in the
// order of the run's ([runs.StatColumns]); one none of whose kernels was
// measured is left out. A sampled run's projected launches count with
// their representatives' values. Its kernels are read a page at a time,
// their pairs never held, and the figures kept for the run's and trace's
// versions: a run that is still running is correlated as far as it got.
func (co *Correlator) Correlation(ctx context.Context, r cascade.Run) (cascade.RunCorrelation, error) {
	t, err := co.rd.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return cascade.RunCorrelation{}, err
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano(), "@", t.UpdatedAt.UnixNano())
	if c, ok := co.correlations.Get(key); ok {
		return c, nil
	}
	cols := runs.StatColumns(r)
	tallies := make([]statTally, len(cols))
	for i, c := range cols {
		tallies[i] = statTally{stat: c.Name, unit: c.Unit}
	}
	err = co.eachPair(ctx, r, t, -1, func(_, col int, p cascade.CounterPair) bool {
		tallies[col].add(p)
		return true
	})
	if err != nil {
		return cascade.RunCorrelation{}, err
	}
	out := cascade.RunCorrelation{Stats: []cascade.StatCorrelation{}}
	for i := range tallies {
		if c, ok := tallies[i].result(); ok {
			out.Stats = append(out.Stats, c)
		}
	}
	cfgs, _ := co.rd.cfg.Configs.SimConfigs()
	cfg, found := simconfig.Find(cfgs, r.SimConfig)
	if !found && r.ConfigBase != "" {
		// A variant: its base's compute capability and card.
		cfg, found = simconfig.Find(cfgs, r.ConfigBase)
	}
	cfg.Name, cfg.Base = r.SimConfig, r.ConfigBase
	out.GPUWarnings = gpuWarnings(t, cfg, found)
	co.correlations.Put(key, out)
	return out, nil
}

// maxCachedCorrelations bounds the correlations cache.
const maxCachedCorrelations = 64

// CounterPairs is a page of r's pairs of one statistic, in launch order,
// as [Correlator.Correlation] counts them: the points of its scatter.
// Cursors are cascade.Cursor of the run's kernels' Seq; Total (with
// p.Count) is the statistic's Kernels.
func (co *Correlator) CounterPairs(ctx context.Context, r cascade.Run, stat string, p cascade.Page) (cascade.PageOf[cascade.CounterPair], error) {
	var page cascade.PageOf[cascade.CounterPair]
	limit, err := p.Limit()
	if err != nil {
		return page, err
	}
	after, hasAfter, err := cascade.ParseCursor(p.After)
	if err != nil {
		return page, err
	}
	want := slices.IndexFunc(runs.StatColumns(r), func(c cascade.StatCounter) bool { return c.Name == stat })
	if want < 0 {
		return page, cascade.Errorf(cascade.EINVALID, "stat: run %s has no statistic %q", r.ID, stat)
	}
	t, err := co.rd.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return page, err
	}
	from := -1
	if hasAfter {
		from = int(after)
	}
	page.Items = []cascade.CounterPair{}
	err = co.eachPair(ctx, r, t, from, func(_, col int, pr cascade.CounterPair) bool {
		if col != want {
			return true
		}
		if len(page.Items) == limit {
			page.HasNext = true
			return false
		}
		page.Items = append(page.Items, pr)
		return true
	})
	if err != nil || !p.Count {
		return page, err
	}
	c, err := co.Correlation(ctx, r)
	for _, s := range c.Stats {
		if s.Stat == stat {
			page.Total = int64(s.Kernels)
		}
	}
	return page, err
}

// errStop ends eachPair's walk early.
var errStop = errors.New("stop")

// eachPair calls fn, in launch order from the kernel after Seq after (-1:
// from the first), with each kernel of r (its Seq) and each of its
// statistics (an index of runs.StatColumns) that the trace's profiles
// measured and the run has a value of, until fn returns false. A kernel
// the simulator's cycle limit truncated takes no part.
func (co *Correlator) eachPair(ctx context.Context, r cascade.Run, t cascade.Trace, after int, fn func(seq, col int, p cascade.CounterPair) bool) error {
	if !profiled(t) {
		return nil
	}
	cols := runs.StatColumns(r)
	if len(cols) == 0 {
		return nil
	}
	colOf := make(map[string]int, len(cols))
	for i, c := range cols {
		colOf[c.Name] = i
	}
	table, err := runs.StatTable(r)
	if err != nil {
		return err
	}
	idx, err := co.kernelIndex(ctx, t)
	if err != nil {
		return err
	}
	p := cascade.Page{First: cascade.MaxPageSize}
	if after >= 0 {
		p.After = cascade.Cursor(int64(after))
	}
	for {
		page, err := co.rd.cfg.Store.RunKernelPage(ctx, r.ID, p)
		if err != nil {
			return fmt.Errorf("read run %s's kernels: %w", r.ID, err)
		}
		err = co.pairPage(ctx, t.ID, page.Items, idx, table, colOf, fn)
		if errors.Is(err, errStop) || (err == nil && (!page.HasNext || len(page.Items) == 0)) {
			return nil
		}
		if err != nil {
			return err
		}
		p.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
	}
}

// pairPage is eachPair over one page of kernels: their counters are read
// in one read, of the span of trace positions they cover.
func (co *Correlator) pairPage(ctx context.Context, traceID string, ks []cascade.RunKernel, idx map[kernellist.Ref]int, table *simstats.Table, colOf map[string]int, fn func(seq, col int, p cascade.CounterPair) bool) error {
	at := make([]int, len(ks)) // trace position of each, -1 for none
	from, to := math.MaxInt, -1
	for i, k := range ks {
		at[i] = -1
		if k.KernelID == nil || k.Truncated {
			continue
		}
		if s, ok := idx[kernellist.Ref{ID: *k.KernelID, Context: cascade.Deref(k.Context)}]; ok {
			at[i], from, to = s, min(from, s), max(to, s+1)
		}
	}
	if to < 0 {
		return nil
	}
	cs, err := co.rd.cfg.Store.KernelCounters(ctx, traceID, from, to)
	if err != nil {
		return fmt.Errorf("read the counters of %s: %w", traceID, err)
	}
	bySeq := map[int][]cascade.KernelCounter{}
	for _, c := range cs {
		bySeq[c.Seq] = append(bySeq[c.Seq], c)
	}
	for i, k := range ks {
		counters := bySeq[at[i]]
		if at[i] < 0 || len(counters) == 0 {
			continue
		}
		vals, err := runs.KernelStats(table, k)
		if err != nil {
			return err
		}
		for _, c := range counters {
			col, ok := colOf[c.Stat]
			if !ok || col >= len(vals) || math.IsNaN(vals[col]) {
				continue
			}
			sim := vals[col]
			pr := cascade.CounterPair{
				Seq: at[i], RunSeq: k.Seq, KernelID: *k.KernelID, Context: k.Context, Name: k.Name,
				Simulated: sim, Measured: c.Mean, MeasuredMin: c.Min, MeasuredMax: c.Max, Measurements: c.Count,
				ErrorPct: pairError(sim, c.Mean), Representative: k.Simulated,
			}
			if !fn(k.Seq, col, pr) {
				return errStop
			}
		}
	}
	return nil
}

// profiled reports whether any of t's profiles gave counters.
func profiled(t cascade.Trace) bool {
	for _, p := range t.Profiles {
		if p.Matched > 0 && len(p.Stats) > 0 {
			return true
		}
	}
	return false
}

// kernelIndex maps t's kernels (id and context) to their positions in its
// list, read a page at a time and kept for the trace's version.
func (co *Correlator) kernelIndex(ctx context.Context, t cascade.Trace) (map[kernellist.Ref]int, error) {
	key := fmt.Sprint(t.ID, "@", t.UpdatedAt.UnixNano())
	if idx, ok := co.kernelIndexes.Get(key); ok {
		return idx, nil
	}
	idx := make(map[kernellist.Ref]int, t.KernelCount)
	err := co.rd.eachTraceKernel(ctx, t.ID, func(k cascade.Kernel) {
		idx[kernellist.Ref{ID: k.KernelID, Context: cascade.Deref(k.Context)}] = k.Seq
	})
	if err != nil {
		return nil, err
	}
	co.kernelIndexes.Put(key, idx)
	return idx, nil
}

// maxCachedIndexes bounds the kernel indexes kept: a trace of a million
// kernels' is tens of MB.
const maxCachedIndexes = 4
