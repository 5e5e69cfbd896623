package sampled

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// SweepInput asks for a sampled design sweep: every cell of a sweep's
// grid simulated as a sampled run of one plan, the plan's
// representatives simulated under every variant.
type SweepInput struct {
	Sweep runs.SweepInput
	// PlanID is a plan of the sweep's one trace.
	PlanID string
	// Validate gives each cell a full run of its variant to check its
	// projection against (see [Input.Validate]).
	Validate bool
}

// LaunchSweep checks a sampled sweep as runs.Sweeps.LaunchSweep checks
// a sweep, then stores it with each cell's sampled run, segments and any
// validation run in one transaction, and queues the segments. The
// sweep's runs are the sampled runs and the validation runs; its
// progress counts them. When anything is wrong nothing is stored.
func (c *Coordinator) LaunchSweep(ctx context.Context, in SweepInput) (cascade.Sweep, error) {
	if len(in.Sweep.TraceIDs) != 1 {
		return cascade.Sweep{}, cascade.Errorf(cascade.EINVALID, "traceIds: a sampled sweep has one trace, its plan's; %d given", len(in.Sweep.TraceIDs))
	}
	trace := in.Sweep.TraceIDs[0]
	var parts *planParts
	once := func(ctx context.Context, planID, traceID string) (planParts, error) {
		if parts == nil {
			p, err := c.planParts(ctx, planID, traceID)
			if err != nil {
				return p, err
			}
			parts = &p
		}
		return *parts, nil
	}
	// The plan first: a sweep of a plan that is not the trace's is
	// refused for that before its grid is checked.
	if _, err := once(ctx, in.PlanID, trace); err != nil {
		return cascade.Sweep{}, err
	}
	s, cells, err := c.cfg.Sweeps.CheckSweep(ctx, in.Sweep)
	if err != nil {
		return cascade.Sweep{}, err
	}
	var ins []runs.LaunchInput
	sets := make([]launchSet, len(cells))
	for i, cell := range cells {
		run := runs.LaunchInput{TraceID: trace, SimConfig: cell.Name, Label: in.Sweep.Label, Rerun: in.Sweep.Rerun}
		if sets[i], err = c.buildWith(ctx, Input{Run: run, PlanID: in.PlanID, Validate: in.Validate, canonical: true}, once); err != nil {
			return cascade.Sweep{}, err
		}
		ins = append(ins, sets[i].ins...)
	}
	s, rs, err := c.cfg.Sweeps.LaunchSweepRuns(ctx, s, ins, func(rs []cascade.Run) error {
		off := 0
		for _, set := range sets {
			if err := set.shape(rs[off : off+len(set.ins)]); err != nil {
				return err
			}
			off += len(set.ins)
		}
		return nil
	})
	if err != nil {
		return cascade.Sweep{}, err
	}
	off := 0
	for _, set := range sets {
		c.launched(rs[off:off+len(set.ins)], set)
		off += len(set.ins)
	}
	return s, nil
}
