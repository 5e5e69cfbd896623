package results

import (
	"context"
	"fmt"
	"math"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// Plans reads sampling plans as sampled runs were projected from them
// (*plans.Service).
type Plans interface {
	SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error)
	SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error)
	Input(ctx context.Context, t cascade.Trace) (sampling.Input, error)
}

// pairedKey names a paired speedup by its two runs as they were.
func pairedKey(base, cell cascade.Run) string {
	return fmt.Sprintf("%s@%d/%s@%d", base.ID, base.UpdatedAt.UnixNano(), cell.ID, cell.UpdatedAt.UnixNano())
}

// pairSpeedups gives each cell whose one succeeded run and the
// baseline's are sampled runs of one plan the bounds of their paired
// speedup (see [sampling.ProjectSpeedup]), in time: the cycles' ratio at
// the two runs' clocks. Then every cell with bounds says whether they
// exclude 1. The paired speedups are kept in t, by the two runs'
// versions.
func (m *Reader) pairSpeedups(ctx context.Context, t *designTally, ds *cascade.DesignSpace, rs []cascade.Run) error {
	defer func() {
		for i := range ds.Cells {
			c := &ds.Cells[i]
			if c.SpeedupLow != nil && c.SpeedupHigh != nil && c.SimConfig != ds.Baseline {
				c.Significant = cascade.Ptr(*c.SpeedupLow > 1 || *c.SpeedupHigh < 1)
			}
		}
	}()
	if m.cfg.Plans == nil || ds.Baseline == "" {
		return nil
	}
	// Each cell's one succeeded sampled run, when that is all it has.
	one := map[string]*cascade.Run{}
	count := map[string]int{}
	for i, r := range rs {
		if r.SampledByID != nil || t.validation[r.ID] || r.State != cascade.RunSucceeded {
			continue
		}
		count[r.SimConfig]++
		if r.Sampling != nil {
			one[r.SimConfig] = &rs[i]
		}
	}
	base := one[ds.Baseline]
	if base == nil || count[ds.Baseline] != 1 {
		return nil
	}
	var cache pairInputs
	for i := range ds.Cells {
		c := &ds.Cells[i]
		r := one[c.SimConfig]
		if c.SimConfig == ds.Baseline || r == nil || count[c.SimConfig] != 1 || r.Sampling.PlanID != base.Sampling.PlanID || r.TraceID != base.TraceID {
			continue
		}
		key := pairedKey(*base, *r)
		s, ok := t.paired[key]
		if !ok {
			var err error
			if s, err = m.pairedSpeedup(ctx, &cache, *base, *r); err != nil {
				return err
			}
			t.paired[key] = s
		}
		bc, cc := base.Figures.CoreClockMHz, r.Figures.CoreClockMHz
		if !(bc > 0 && cc > 0) || s.Ratio == 0 {
			continue
		}
		k := cc / bc // time speedup = cycles' ratio × the cell's clock / the baseline's
		c.SpeedupLow, c.SpeedupHigh, c.Paired = cascade.Ptr(s.Low*k), cascade.Ptr(s.High*k), true
	}
	return nil
}

// pairInputs is what pairing reads once per request: the plan and its
// trace's launches.
type pairInputs struct {
	plan  *cascade.SamplingPlan
	input sampling.Input
}

// pairedSpeedup reads two sampled runs' representatives and their plan.
func (m *Reader) pairedSpeedup(ctx context.Context, c *pairInputs, base, cell cascade.Run) (sampling.Speedup, error) {
	if c.plan == nil {
		p, err := m.cfg.Plans.SamplingPlan(ctx, base.Sampling.PlanID)
		if cascade.ErrorCode(err) == cascade.ENOTFOUND {
			return sampling.Speedup{}, nil // the plan is gone: each cell's own interval stands
		}
		if err != nil {
			return sampling.Speedup{}, err
		}
		if p.Strata, err = m.cfg.Plans.SamplingStrata(ctx, p.ID); err != nil {
			return sampling.Speedup{}, err
		}
		tr, err := m.cfg.Store.Trace(ctx, base.TraceID)
		if err != nil {
			return sampling.Speedup{}, err
		}
		if c.input, err = m.cfg.Plans.Input(ctx, tr); err != nil {
			return sampling.Speedup{}, err
		}
		c.plan = &p
	}
	b, err := m.representatives(ctx, base.ID)
	if err != nil {
		return sampling.Speedup{}, err
	}
	v, err := m.representatives(ctx, cell.ID)
	if err != nil {
		return sampling.Speedup{}, err
	}
	s, err := sampling.ProjectSpeedup(*c.plan, c.input, b, v)
	if err != nil || math.IsNaN(s.Low) || math.IsNaN(s.High) {
		return sampling.Speedup{}, nil // the runs do not fit their plan: no paired bounds
	}
	return s, nil
}

// representatives reads a sampled run's simulated launches' cycles, by
// launch position (its kernels are every launch, in order).
func (m *Reader) representatives(ctx context.Context, runID string) (map[int]sampling.Simulated, error) {
	sim := map[int]sampling.Simulated{}
	p := cascade.Page{First: cascade.MaxPageSize}
	pos := 0
	for {
		pg, err := m.cfg.Store.RunKernelPage(ctx, runID, p)
		if err != nil {
			return nil, err
		}
		for _, k := range pg.Items {
			if k.Simulated != nil && *k.Simulated {
				sim[pos] = sampling.Simulated{Cycles: float64(k.SimCycles)}
			}
			pos++
		}
		if !pg.HasNext || len(pg.Items) == 0 {
			return sim, nil
		}
		p.After = cascade.Cursor(int64(lastSeq(pg.Items)))
	}
}
