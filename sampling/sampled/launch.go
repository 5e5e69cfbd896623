package sampled

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling"
)

// Input asks for a sampled run: only the plan's representatives (and
// their warm-up) are simulated, every launch is projected from them.
type Input struct {
	// Run is the trace, config, label and rerun of the sampled run, as
	// for any run; its KernelIDs must be nil: the plan says which kernels
	// are simulated.
	Run    runs.LaunchInput
	PlanID string
	// Validate also checks the projection against a full run of the same
	// trace and config: the newest SUCCEEDED one, else one launched with
	// the sampled run.
	Validate bool

	// canonical: Run.SimConfig is a config's canonical name, checked
	// already (a sweep's cell), so it is not resolved again.
	canonical bool
}

// Launch stores a sampled run, its segments (one per range of adjacent
// launches to simulate, sampling.Ranges) and any validation run in one
// transaction, then the lifecycle queues the segments in order. The
// sampled run itself is never queued: it follows its segments (see
// settle). Its errors are those of runs.Manager.Launch, and
// BAD_USER_INPUT or NOT_FOUND naming the plan.
func (c *Coordinator) Launch(ctx context.Context, in Input) (cascade.Run, error) {
	set, err := c.build(ctx, in)
	if err != nil {
		return cascade.Run{}, err
	}
	rs, err := c.cfg.Runs.LaunchRuns(ctx, set.ins, set.shape)
	if err != nil {
		return cascade.Run{}, err
	}
	c.launched(rs, set)
	return rs[0], nil
}

// launchSet is what a sampled run launches: the requests of the sampled
// run, its segments and any validation run, in that order, and how to
// shape the runs they make into a sampled run with its parts.
type launchSet struct {
	ins   []runs.LaunchInput
	shape func(rs []cascade.Run) error
	segs  int
	plan  string
}

// build checks a sampled run's request and returns what it launches.
func (c *Coordinator) build(ctx context.Context, in Input) (launchSet, error) {
	return c.buildWith(ctx, in, c.planParts)
}

// planParts is what a sampled run of a plan reads of it and its trace.
type planParts struct {
	plan   cascade.SamplingPlan
	ranges []cascade.KernelRange // to simulate: the plan's, cut (sampling.CutRanges)
	cut    bool                  // ranges holds more than the plan's
	input  sampling.Input
	// untraced counts the trace's launches without a kernel trace.
	untraced int
}

// buildWith is build reading plans with parts (a sweep reads its plan once).
func (c *Coordinator) buildWith(ctx context.Context, in Input, parts func(ctx context.Context, planID, traceID string) (planParts, error)) (launchSet, error) {
	if in.Run.KernelIDs != nil {
		return launchSet{}, cascade.Errorf(cascade.EINVALID, "kernelIds: leave it out for a sampled run: its plan says which kernels are simulated")
	}
	if in.Run.KernelContexts != nil {
		return launchSet{}, cascade.Errorf(cascade.EINVALID, "kernelContexts: leave it out for a sampled run: its plan says which kernels are simulated")
	}
	pp, err := parts(ctx, in.PlanID, in.Run.TraceID)
	if err != nil {
		return launchSet{}, err
	}
	plan, ranges, input := pp.plan, pp.ranges, pp.input

	// The config by its canonical name, so that segments, the validation
	// run and the full run looked for are of the same variant.
	if !in.canonical {
		cfg, err := c.cfg.Variants.Variant(ctx, in.Run.SimConfig, in.Run.Params)
		if err != nil {
			return launchSet{}, err
		}
		in.Run.SimConfig, in.Run.Params = cfg.Name, nil
	}

	// The sampled run, checked as any run of its trace and config, then
	// its segments, then any validation run.
	parentIn := in.Run
	parentIn.Rerun, parentIn.Coordinator = true, true
	ins := []runs.LaunchInput{parentIn}
	sizes, err := sampling.SegmentInstructions(input, ranges)
	if err != nil {
		return launchSet{}, err
	}
	var instr []int64
	var segIns []runs.LaunchInput
	several := severalContexts(input.Launches)
	for i, rg := range ranges {
		ids := make([]int, 0, rg.End-rg.Start+1)
		var ctxs []string
		for id := rg.Start; id <= rg.End; id++ {
			ids = append(ids, id)
			if several {
				ctxs = append(ctxs, cascade.Deref(rg.Context))
			}
		}
		instr = append(instr, int64(sizes[i]))
		segIns = append(segIns, runs.LaunchInput{TraceID: in.Run.TraceID, SimConfig: in.Run.SimConfig, KernelIDs: ids, KernelContexts: ctxs, Segment: true,
			Label: fmt.Sprintf("segment %d of %d", i+1, len(ranges)), Rerun: in.Run.Rerun})
	}
	// The segments are stored, and so queued, longest first (at is the
	// range of each in that order).
	at := sampling.LongestFirst(instr)
	for _, i := range at {
		ins = append(ins, segIns[i])
	}
	var full *cascade.Run
	if in.Validate && pp.untraced > 0 {
		return launchSet{}, cascade.Errorf(cascade.EINVALID, "sampling.validate: trace %q has no kernel trace of %d of its %d launches: "+
			"a validation run simulates every launch; validate on the trace traced whole", in.Run.TraceID, pp.untraced, len(input.Launches))
	}
	if in.Validate {
		if full, err = results.NewestFullRun(ctx, c.cfg.Store, in.Run.TraceID, in.Run.SimConfig); err != nil {
			return launchSet{}, err
		}
		if full == nil {
			ins = append(ins, runs.LaunchInput{TraceID: in.Run.TraceID, SimConfig: in.Run.SimConfig,
				Label: "validation of a sampled run", Rerun: in.Run.Rerun})
		}
	}

	segs := len(ranges)
	shape := func(rs []cascade.Run) error {
		parent := &rs[0]
		// What its segments simulate: the plan's launches, and a cut
		// segment's warm-up twice.
		sr := &cascade.SampledRun{
			PlanID: plan.ID, Instructions: plan.Instructions, Representatives: plan.Samples,
			SimulatedLaunches: plan.SimulatedLaunches, SimulatedInstructions: plan.SimulatedInstructions,
			SimulatedFraction: plan.SimulatedFraction,
		}
		if pp.cut {
			sr.SimulatedLaunches, sr.SimulatedInstructions = 0, 0
			for i, rg := range ranges {
				sr.SimulatedLaunches += rg.Launches
				sr.SimulatedInstructions += instr[i]
			}
			if plan.Instructions > 0 {
				sr.SimulatedFraction = float64(sr.SimulatedInstructions) / float64(plan.Instructions)
			}
		}
		parent.Sampling, parent.KernelsTotal = sr, plan.Samples
		parent.History = append(parent.History, runs.Stamp(fmt.Sprintf("sampled with plan %s: %d representatives, %d launches simulated in %d segments",
			plan.ID, plan.Samples, plan.SimulatedLaunches, segs)))
		pos := make([]int, len(at)) // where range i's segment is in rs[1:]
		for k, i := range at {
			pos[i] = k
		}
		for i, rg := range ranges {
			seg := &rs[1+pos[i]]
			seg.SampledByID = &parent.ID
			sr.SegmentIDs = append(sr.SegmentIDs, seg.ID)
			sr.SegmentRepresentatives = append(sr.SegmentRepresentatives, rg.Representatives)
			sr.SegmentInstructions = append(sr.SegmentInstructions, instr[i])
			sr.SegmentWarmups = append(sr.SegmentWarmups, rg.Warmup)
		}
		switch {
		case full != nil:
			sr.ValidationRunID = &full.ID
		case in.Validate:
			v := &rs[1+segs]
			label := "validation of sampled run " + parent.ID
			v.Label = &label
			sr.ValidationRunID = &v.ID
		}
		return nil
	}
	return launchSet{ins: ins, shape: shape, segs: segs, plan: plan.ID}, nil
}

// launched logs a stored sampled run (rs[0], then its parts) and settles
// it when some of its segments were reused.
func (c *Coordinator) launched(rs []cascade.Run, set launchSet) {
	segs := set.segs
	queued := 0
	for _, s := range rs[1 : 1+segs] {
		if s.State == cascade.RunQueued {
			queued++
		}
	}
	c.log.Info("sampled run queued", "run", rs[0].ID, "trace", rs[0].TraceID, "config", rs[0].SimConfig,
		"plan", set.plan, "segments", segs, "queued", queued)
	if queued < segs { // some were reused: they may be all it needs
		c.settleLater(rs[0].ID)
	}
}

// planParts reads a plan, its ranges and its trace's launches, checking
// that the plan is of the trace and still matches it.
func (c *Coordinator) planParts(ctx context.Context, planID, traceID string) (planParts, error) {
	if c.cfg.Plans == nil {
		return planParts{}, cascade.Errorf(cascade.EINVALID, "sampling: this server reads no sampling plans")
	}
	plan, err := c.cfg.Plans.SamplingPlan(ctx, planID)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return planParts{}, cascade.Errorf(cascade.ENOTFOUND, "sampling.plan: no sampling plan %q", planID)
	}
	if err != nil {
		return planParts{}, err
	}
	if plan.TraceID != traceID {
		return planParts{}, cascade.Errorf(cascade.EINVALID, "sampling.plan: plan %q is a plan of trace %q, not of %q: plans are a trace's; plan %q with the same method, target and warm-up "+
			"(a trace taken with the plan's traceList has the same launches, stats and timing, so it is planned the same)", plan.ID, plan.TraceID, traceID, traceID)
	}
	if plan.Strata, err = c.cfg.Plans.SamplingStrata(ctx, plan.ID); err != nil {
		return planParts{}, fmt.Errorf("read plan %s: %w", plan.ID, err)
	}
	ranges := sampling.Ranges(plan)
	if len(ranges) == 0 {
		return planParts{}, cascade.Errorf(cascade.EINVALID, "sampling.plan: plan %q has no launches to simulate", plan.ID)
	}
	t, err := c.cfg.Store.Trace(ctx, traceID)
	if err != nil {
		return planParts{}, err
	}
	input, err := c.cfg.Plans.Input(ctx, t)
	if err != nil {
		return planParts{}, err
	}
	if len(input.Launches) != plan.Launches {
		return planParts{}, cascade.Errorf(cascade.ECONFLICT, "sampling.plan: plan %q has %d launches, its trace now %d; plan again", plan.ID, plan.Launches, len(input.Launches))
	}

	untraced, err := needsUntraced(plan, ranges, input)
	if err != nil {
		return planParts{}, err
	}
	// A segment that would be the run's wall time alone is cut, its
	// second part after a warm-up the first part simulates too.
	atOnce := c.cfg.Executor.Slots()
	if c.cfg.AtOnce != nil {
		atOnce = c.cfg.AtOnce()
	}
	cut := sampling.CutRanges(plan, input, ranges, atOnce)
	return planParts{plan: plan, ranges: cut, cut: len(cut) > len(ranges), input: input, untraced: untraced}, nil
}

// needsUntraced counts the trace's untraced launches (sampling.Launch
// .Untraced: a trace taken with the tracer's DYNAMIC_KERNEL_LIMIT ranges)
// and refuses a plan whose ranges would simulate one (by context and
// kernel id: sampling.UntracedOf), naming them: the trace must hold the
// kernel traces of the plan's traceList.
func needsUntraced(plan cascade.SamplingPlan, ranges []cascade.KernelRange, input sampling.Input) (int, error) {
	n := 0
	for _, l := range input.Launches {
		if l.Untraced {
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	u := sampling.UntracedOf(plan.TraceID, ranges, func(i int) (sampling.Launch, bool) {
		if i < 0 || i >= len(input.Launches) {
			return sampling.Launch{}, false
		}
		return input.Launches[i], true
	})
	if u == nil {
		return n, nil
	}
	return n, cascade.Errorf(cascade.EINVALID, "sampling.plan: plan %q simulates launches the trace has no kernel trace of: kernel ids %s; "+
		"trace them (the plan's traceList) and upload their kernel traces, or plan with the method, target and warm-up of the plan whose traceList the trace was taken with",
		plan.ID, sampling.UntracedNames(u, 20))
}
