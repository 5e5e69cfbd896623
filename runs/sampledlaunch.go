package runs

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// SamplingInput asks [Manager.Launch] for a sampled run: only the plan's
// representatives (and their warm-up) are simulated, every launch is
// projected from them.
type SamplingInput struct {
	PlanID string
	// Validate also checks the projection against a full run of the same
	// trace and config: the newest SUCCEEDED one, else one launched with
	// the sampled run.
	Validate bool
}

// launchSampled is Launch of a sampled run (in.Sampling set), launchMu
// held. It stores the sampled run, its segments (one per range of
// adjacent launches to simulate, sampling.Ranges) and any validation run
// in one transaction, then queues the segments in order. The sampled run
// itself is never queued: it follows its segments (see settleSampled).
func (m *Manager) launchSampled(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	if in.KernelIDs != nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "kernelIds: leave it out for a sampled run: its plan says which kernels are simulated")
	}
	if m.cfg.Plans == nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "sampling: this server reads no sampling plans")
	}
	plan, err := m.cfg.Plans.SamplingPlan(ctx, in.Sampling.PlanID)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "sampling.plan: no sampling plan %q", in.Sampling.PlanID)
	}
	if err != nil {
		return cascade.Run{}, err
	}
	if plan.TraceID != in.TraceID {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "sampling.plan: plan %q is a plan of trace %q, not of %q", plan.ID, plan.TraceID, in.TraceID)
	}
	// The trace and the config are checked as for any run.
	parent, err := m.newRun(ctx, LaunchInput{TraceID: in.TraceID, SimConfig: in.SimConfig, Label: in.Label, Rerun: true}, nil)
	if err != nil {
		return cascade.Run{}, err
	}
	if plan.Strata, err = m.cfg.Plans.SamplingStrata(ctx, plan.ID); err != nil {
		return cascade.Run{}, fmt.Errorf("read plan %s: %w", plan.ID, err)
	}
	ranges := sampling.Ranges(plan)
	if len(ranges) == 0 {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "sampling.plan: plan %q has no launches to simulate", plan.ID)
	}
	t, err := m.cfg.Store.Trace(ctx, in.TraceID)
	if err != nil {
		return cascade.Run{}, err
	}
	input, err := m.cfg.Plans.Input(ctx, t)
	if err != nil {
		return cascade.Run{}, err
	}
	if len(input.Launches) != plan.Launches {
		return cascade.Run{}, cascade.Errorf(cascade.ECONFLICT, "sampling.plan: plan %q has %d launches, its trace now %d; plan again", plan.ID, plan.Launches, len(input.Launches))
	}
	cfg, err := m.config(in.SimConfig)
	if err != nil {
		return cascade.Run{}, err
	}

	sr := &cascade.SampledRun{
		PlanID: plan.ID, Instructions: plan.Instructions, Representatives: plan.Samples,
		SimulatedLaunches: plan.SimulatedLaunches, SimulatedInstructions: plan.SimulatedInstructions,
		SimulatedFraction: plan.SimulatedFraction,
	}
	parent.Sampling, parent.KernelsTotal = sr, plan.Samples
	parent.History = append(parent.History, Stamp(fmt.Sprintf("sampled with plan %s: %d representatives, %d launches simulated in %d segments",
		plan.ID, plan.Samples, plan.SimulatedLaunches, len(ranges))))

	c := &reuseCache{}
	all := []cascade.Run{parent}
	for i, rg := range ranges {
		ids := make([]int, 0, rg.End-rg.Start+1)
		for id := rg.Start; id <= rg.End; id++ {
			ids = append(ids, id)
		}
		var instr int64
		for l := rg.FirstLaunch; l <= rg.LastLaunch; l++ {
			if x := input.Launches[l]; x.Context == cascade.Deref(rg.Context) && x.KernelID >= rg.Start && x.KernelID <= rg.End {
				instr += max(x.WarpInstructions, 0)
			}
		}
		label := fmt.Sprintf("segment %d of %d", i+1, len(ranges))
		seg := cascade.Run{
			ID: newRunID(), TraceID: parent.TraceID, SimConfig: parent.SimConfig, KernelIDs: ids, Label: &label,
			State: cascade.RunQueued, Executor: parent.Executor, History: []string{},
			Figures: cascade.RunFigures{CoreClockMHz: cfg.CoreClockMHz}, SampledByID: &parent.ID,
		}
		if !in.Rerun {
			orig, err := m.reusable(ctx, seg, cfg, c)
			if err != nil {
				return cascade.Run{}, err
			}
			if orig != nil {
				reuse(&seg, *orig)
			}
		}
		sr.SegmentIDs = append(sr.SegmentIDs, seg.ID)
		sr.SegmentRepresentatives = append(sr.SegmentRepresentatives, rg.Representatives)
		sr.SegmentInstructions = append(sr.SegmentInstructions, instr)
		all = append(all, seg)
	}
	if in.Sampling.Validate {
		full, err := m.newestFullRun(ctx, parent.TraceID, parent.SimConfig)
		if err != nil {
			return cascade.Run{}, err
		}
		if full == nil {
			v, err := m.newRun(ctx, LaunchInput{TraceID: parent.TraceID, SimConfig: parent.SimConfig,
				Label: "validation of sampled run " + parent.ID, Rerun: in.Rerun}, c)
			if err != nil {
				return cascade.Run{}, err
			}
			all = append(all, v)
			full = &v
		}
		sr.ValidationRunID = &full.ID
	}
	// The kernels of reused runs first: a run is never seen SUCCEEDED
	// without them.
	if err := m.copyKernels(ctx, all); err != nil {
		return cascade.Run{}, err
	}
	if err := m.cfg.Store.CreateRuns(ctx, all); err != nil {
		return cascade.Run{}, err
	}
	var queue []string
	for _, r := range all {
		m.publish(r)
		if r.State == cascade.RunQueued && r.Sampling == nil {
			queue = append(queue, r.ID)
		}
	}
	m.log.Info("sampled run queued", "run", parent.ID, "trace", parent.TraceID, "config", parent.SimConfig,
		"plan", plan.ID, "segments", len(ranges), "queued", len(queue))
	m.Enqueue(queue...)
	if len(queue) < len(all)-1 { // some were reused: they may be all it needs
		m.settleLater(parent.ID)
	}
	return all[0], nil
}

// newestFullRun is the newest SUCCEEDED run of every kernel of the trace
// under the config that is neither sampled nor a segment; nil for none.
func (m *Manager) newestFullRun(ctx context.Context, traceID, config string) (*cascade.Run, error) {
	rs, err := m.cfg.Store.TraceRuns(ctx, traceID)
	if err != nil {
		return nil, err
	}
	for i := len(rs) - 1; i >= 0; i-- { // oldest first
		if r := rs[i]; isFullRun(r) && r.SimConfig == config && r.State == cascade.RunSucceeded {
			return &r, nil
		}
	}
	return nil, nil
}

// isFullRun reports whether r simulates every kernel of its trace itself:
// no subset, not sampled, not a segment.
func isFullRun(r cascade.Run) bool {
	return len(r.KernelIDs) == 0 && r.Sampling == nil && r.SampledByID == nil
}
