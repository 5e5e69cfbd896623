package sampled

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling"
)

// Split runs live here, beside sampled runs, because they are the same
// machinery: a run that is never simulated itself follows its segments
// (ordinary runs, which queue, run on either executor, are reused,
// cancelled and restarted as any run is), and once all have succeeded
// writes its kernels from theirs. The lifecycle has one Coordinator;
// settle.go dispatches on the kind of run a segment is part of.

// SplitInput asks for a split run: every launch of the trace simulated,
// in segments of consecutive launches that run in parallel, their results
// stitched into the split run's kernels.
type SplitInput struct {
	// Run is the trace, config, label and rerun of the split run, as for
	// any run; its KernelIDs must be nil.
	Run runs.LaunchInput
	// Segments is how many segments to cut the trace into; 0 for the
	// default, the executor's slots (at least 2, at most what the trace
	// allows: sampling.MaxSegments).
	Segments int
	// Warmup is how many launches before its own each segment simulates
	// first; nil for one step of the program (sampling.Period).
	Warmup *int
}

// LaunchSplit stores a split run and its segments (sampling.Split) in one
// transaction, then the lifecycle queues the segments in order. The split
// run itself is never queued: it follows its segments (see settleSplit).
// Its errors are those of runs.Manager.Launch, and BAD_USER_INPUT naming
// split's fields.
func (c *Coordinator) LaunchSplit(ctx context.Context, in SplitInput) (cascade.Run, error) {
	if in.Run.KernelIDs != nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "kernelIds: leave it out for a split run: it simulates every launch")
	}
	if in.Run.KernelContexts != nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "kernelContexts: leave it out for a split run: it simulates every launch")
	}
	if c.cfg.Plans == nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "split: this server reads no trace launches to split")
	}
	t, err := c.cfg.Store.Trace(ctx, in.Run.TraceID)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "traceId: trace %q not found", in.Run.TraceID)
	} else if err != nil {
		return cascade.Run{}, err
	}
	if t.State != cascade.TraceReady {
		return cascade.Run{}, cascade.Errorf(cascade.ECONFLICT, "traceId: trace %q %s; runs launch on ready traces", t.ID, t.State.Is())
	}
	cfg, err := c.cfg.Variants.Variant(ctx, in.Run.SimConfig, in.Run.Params)
	if err != nil {
		return cascade.Run{}, err
	}
	in.Run.SimConfig, in.Run.Params = cfg.Name, nil
	input, err := c.cfg.Plans.Input(ctx, t)
	if err != nil {
		return cascade.Run{}, err
	}
	n := in.Segments
	if n == 0 {
		n = min(max(2, c.cfg.Executor.Slots()), max(2, sampling.MaxSegments(input)))
	}
	warmup := sampling.WarmupStep
	if in.Warmup != nil {
		warmup = *in.Warmup
	}
	segs, note, err := sampling.SplitNoted(input, n, warmup)
	if err != nil {
		return cascade.Run{}, err
	}

	if t.UntracedKernels > 0 {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "split: trace %q has no kernel trace of %d of its %d launches (it was traced with DYNAMIC_KERNEL_LIMIT ranges): "+
			"a split run simulates every launch; launch a sampled run of the plan it was traced with", t.ID, t.UntracedKernels, t.KernelCount+t.UntracedKernels)
	}
	parentIn := in.Run
	parentIn.Rerun = true // its results are its segments', never another run's
	parentIn.Coordinator = true
	ins := []runs.LaunchInput{parentIn}
	several := severalContexts(input.Launches)
	for i, s := range segs {
		ids := make([]int, 0, s.End-s.Start+s.Warmup)
		var ctxs []string
		for l := s.Start - s.Warmup; l < s.End; l++ {
			ids = append(ids, input.Launches[l].KernelID)
			if several {
				ctxs = append(ctxs, input.Launches[l].Context)
			}
		}
		ins = append(ins, runs.LaunchInput{TraceID: in.Run.TraceID, SimConfig: in.Run.SimConfig, KernelIDs: ids, KernelContexts: ctxs, Segment: true,
			Label: fmt.Sprintf("segment %d of %d", i+1, len(segs)), Rerun: in.Run.Rerun})
	}
	period := sampling.Period(input)
	shape := func(rs []cascade.Run) error {
		parent := &rs[0]
		sp := &cascade.SplitRun{Launches: len(input.Launches), Period: period, Note: note}
		for i, s := range segs {
			seg := &rs[1+i]
			seg.SampledByID = &parent.ID
			sp.SegmentIDs = append(sp.SegmentIDs, seg.ID)
			sp.SegmentStarts = append(sp.SegmentStarts, s.Start)
			sp.Warmup = max(sp.Warmup, s.Warmup)
		}
		parent.Split, parent.KernelsTotal = sp, len(input.Launches)
		parent.History = append(parent.History, runs.Stamp(fmt.Sprintf("split into %d segments of consecutive launches, each after %d launches of warm-up (a step is %d)",
			len(segs), sp.Warmup, period)))
		if note != "" {
			parent.History = append(parent.History, runs.Stamp(note))
		}
		return nil
	}
	rs, err := c.cfg.Runs.LaunchRuns(ctx, ins, shape)
	if err != nil {
		return cascade.Run{}, err
	}
	queued := 0
	for _, s := range rs[1:] {
		if s.State == cascade.RunQueued {
			queued++
		}
	}
	c.log.Info("split run queued", "run", rs[0].ID, "trace", rs[0].TraceID, "config", rs[0].SimConfig,
		"segments", len(segs), "queued", queued)
	if queued < len(segs) { // some were reused: they may be all it needs
		c.settleLater(rs[0].ID)
	}
	return rs[0], nil
}

// severalContexts reports whether the launches are of more than one CUDA
// context. Kernel ids restart in each, so a segment of such a trace names
// the context of each of its kernel ids (runs.LaunchInput.KernelContexts):
// an id alone would also simulate the other contexts' launches of it.
func severalContexts(ls []sampling.Launch) bool {
	for i := 1; i < len(ls); i++ {
		if ls[i].Context != ls[0].Context {
			return true
		}
	}
	return false
}
