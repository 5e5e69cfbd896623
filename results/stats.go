package results

import (
	"context"
	"fmt"
	"math"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// StatTotals returns r's totals (see [runs.StatTotals]). Those the run
// lifecycle followed as the run ran here come from it (see [Live]);
// others are read a page of kernels at a time, a run of a million
// kernels never held at once, and kept for the run's version, as
// [Reader.Read] are.
func (m *Reader) StatTotals(ctx context.Context, r cascade.Run) (runs.StatTotals, error) {
	t, err := runs.StatTable(r)
	if err != nil {
		return runs.StatTotals{}, err
	}
	if len(t.Counters) == 0 {
		return runs.StatTotals{Values: []float64{}, Kernels: []int{}}, nil
	}
	if m.cfg.Live != nil {
		if tot, ok := m.cfg.Live.LiveTotals(r); ok {
			return tot, nil
		}
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano())
	if tot, ok := m.totals.Get(key); ok {
		return tot, nil
	}
	sum := runs.NewTotaller(t)
	if err := m.eachKernelPage(ctx, r.ID, cascade.MaxPageSize, sum.Add); err != nil {
		return runs.StatTotals{}, err
	}
	tot := sum.Totals()
	m.totals.Put(key, tot)
	return tot, nil
}

// maxCachedTotals bounds the totals cache; a full cache starts afresh.
const maxCachedTotals = 64

// eachKernelPage calls fn with each page of up to size of the run's stored
// kernel results, in launch order, until the last page or fn's first error.
func (m *Reader) eachKernelPage(ctx context.Context, runID string, size int, fn func([]cascade.RunKernel) error) error {
	p := cascade.Page{First: size}
	for {
		page, err := m.cfg.Store.RunKernelPage(ctx, runID, p)
		if err != nil {
			return fmt.Errorf("read run %s's kernels: %w", runID, err)
		}
		if len(page.Items) > 0 {
			if err := fn(page.Items); err != nil {
				return err
			}
		}
		if !page.HasNext || len(page.Items) == 0 {
			return nil
		}
		p.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
	}
}

// eachTraceKernel calls fn with each kernel of the trace's kernel list, in
// order, reading it a page of cascade.MaxPageSize at a time.
func (m *Reader) eachTraceKernel(ctx context.Context, traceID string, fn func(cascade.Kernel)) error {
	p := cascade.Page{First: cascade.MaxPageSize}
	for {
		page, err := m.cfg.Store.Kernels(ctx, traceID, "", p)
		if err != nil {
			return fmt.Errorf("read the kernels of %s: %w", traceID, err)
		}
		for _, k := range page.Items {
			fn(k)
		}
		if !page.HasNext || len(page.Items) == 0 {
			return nil
		}
		p.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
	}
}

// KernelPage returns a page of r's kernel results in launch order, each
// with its simulated time and, where the trace measured it, its measured
// time and error, as [Reader.Read] gives them; cursors are
// cascade.Cursor of the kernels' Seq.
func (m *Reader) KernelPage(ctx context.Context, r cascade.Run, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error) {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return cascade.PageOf[cascade.RunKernel]{}, err
	}
	page, err := m.cfg.Store.RunKernelPage(ctx, r.ID, p)
	if err != nil {
		return page, err
	}
	cfg, _ := m.runConfig(r)
	m.timing(ctx, t).join(page.Items, cfg)
	return page, m.joinFull(ctx, r, page.Items)
}

// KernelPages calls fn with each page of up to size of r's kernel results
// in launch order, joined with the trace's timing and, on a sampled run
// with a check, with its full run's kernels as [Reader.KernelPage] joins
// them (the timing files read and the full run found once; the full run's
// kernels a page at a time, alongside), until the last page or fn's first
// error.
func (m *Reader) KernelPages(ctx context.Context, r cascade.Run, size int, fn func([]cascade.RunKernel) error) error {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return err
	}
	tt := m.timing(ctx, t)
	cfg, _ := m.runConfig(r)
	full, err := m.checkFullRun(ctx, r)
	if err != nil {
		return fmt.Errorf("the full run sampled run %s is checked against: %w", r.ID, err)
	}
	return m.eachKernelPage(ctx, r.ID, size, func(ks []cascade.RunKernel) error {
		tt.join(ks, cfg)
		if full != nil {
			if err := m.joinFullPages(ctx, full.ID, ks); err != nil {
				return err
			}
		}
		return fn(ks)
	})
}

// join sets the simulated times of kernels under cfg and, where the
// timing measured them, their measured times and errors.
func (tt traceTiming) join(kernels []cascade.RunKernel, cfg cascade.SimConfig) {
	for i, k := range kernels {
		if ns, ok := cfg.SimTimeNs(k.SimCycles); ok {
			kernels[i].SimTimeNs = &ns
		}
	}
	if tt.measured != nil {
		tt.measured.compare(kernels)
	}
}

// present is v, nil when absent.
func present(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// Present returns vs as optional values, nil where absent: the API's
// lists of statistics.
func Present(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i, v := range vs {
		out[i] = present(v)
	}
	return out
}
