package plans

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// RunReader is what evaluating a plan reads of a full run, and
// estimating its wall time of recent runs (*db.DB).
type RunReader interface {
	// Run returns the run with the given id, or a NOT_FOUND error.
	Run(ctx context.Context, id string) (cascade.Run, error)
	// RunKernelPage returns a page of a run's kernels in launch order.
	RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)
	// RunWork returns the last recent SUCCEEDED runs of a config that
	// ran a simulator and timed it, newest first, with the warp
	// instructions each simulated (Estimate).
	RunWork(ctx context.Context, simConfig string, recent int) ([]cascade.RunWork, error)
}

// Evaluate evaluates plan planID against run runID, a SUCCEEDED full run
// of the plan's trace: what a sampled run of the plan would have
// projected had each representative simulated as it did in that run
// (sampling.Evaluate). It simulates nothing. A run that is not a
// SUCCEEDED full run of every launch of the trace is BAD_USER_INPUT,
// naming what it lacks.
func (s *Service) Evaluate(ctx context.Context, planID, runID string) (cascade.SamplingEvaluation, error) {
	runs := s.Runs
	if runs == nil {
		return cascade.SamplingEvaluation{}, fmt.Errorf("evaluate: the plans service reads no runs")
	}
	p, err := s.Store.SamplingPlan(ctx, planID)
	if err != nil {
		return cascade.SamplingEvaluation{}, err
	}
	r, err := runs.Run(ctx, runID)
	if err != nil {
		return cascade.SamplingEvaluation{}, err
	}
	switch {
	case r.TraceID != p.TraceID:
		return cascade.SamplingEvaluation{}, cascade.Errorf(cascade.EINVALID, "run: %s is a run of trace %s, the plan of %s", r.ID, r.TraceID, p.TraceID)
	case r.State != cascade.RunSucceeded:
		return cascade.SamplingEvaluation{}, cascade.Errorf(cascade.EINVALID, "run: %s is %s: a plan is evaluated against a SUCCEEDED run", r.ID, r.State)
	case !r.IsFull():
		return cascade.SamplingEvaluation{}, cascade.Errorf(cascade.EINVALID, "run: %s is a sampled run, a part of one or a run of some kernels: a plan is evaluated against a full run", r.ID)
	}
	if p.Strata, err = s.Store.SamplingStrata(ctx, p.ID); err != nil {
		return cascade.SamplingEvaluation{}, err
	}
	t, err := s.Store.Trace(ctx, p.TraceID)
	if err != nil {
		return cascade.SamplingEvaluation{}, err
	}
	in, err := s.Input(ctx, t)
	if err != nil {
		return cascade.SamplingEvaluation{}, err
	}
	type key struct {
		ctx string
		id  int
	}
	pos := make(map[key]int, len(in.Launches))
	for i, l := range in.Launches {
		pos[key{l.Context, l.KernelID}] = i
	}
	full := make([]float64, len(in.Launches))
	seen := 0
	pg := cascade.Page{First: cascade.MaxPageSize}
	for {
		page, err := runs.RunKernelPage(ctx, r.ID, pg)
		if err != nil {
			return cascade.SamplingEvaluation{}, err
		}
		for _, k := range page.Items {
			if k.KernelID == nil {
				continue
			}
			i, ok := pos[key{cascade.Deref(k.Context), *k.KernelID}]
			if !ok {
				continue
			}
			if k.Truncated {
				return cascade.SamplingEvaluation{}, cascade.Errorf(cascade.EINVALID, "run: %s: kernel %d (launch %d) was truncated by the cycle limit", r.ID, *k.KernelID, i)
			}
			full[i] = float64(k.SimCycles)
			seen++
		}
		if !page.HasNext || len(page.Items) == 0 {
			break
		}
		pg.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
	}
	if seen != len(in.Launches) {
		return cascade.SamplingEvaluation{}, cascade.Errorf(cascade.EINVALID, "run: %s has %d of the trace's %d launches", r.ID, seen, len(in.Launches))
	}
	e, err := sampling.Evaluate(p, in, full)
	if err != nil {
		return cascade.SamplingEvaluation{}, fmt.Errorf("evaluate plan %s against run %s: %w", p.ID, r.ID, err)
	}
	e.RunID = r.ID
	return e, nil
}
