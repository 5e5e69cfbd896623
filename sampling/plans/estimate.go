package plans

import (
	"context"
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// RecentRuns is how many of a config's last timed runs its simulator's
// rate is measured from.
const RecentRuns = 20

// Estimate estimates the wall time of a sampled run of plan planID under
// config on this server: the simulator's rate is measured from the
// config's last RecentRuns timed runs (their warp instructions, as their
// traces count them, over their wall time; sampling.MeasureRate), each
// segment (sampling.Ranges) is one process, and the segments run
// Concurrency at once (sampling.EstimateWall). nil when no run of the
// config can be measured: none finished with a wall time, or their traces
// count no instructions. A config that is not one, or that cannot be used
// (s.Configs), is BAD_USER_INPUT naming config, never nil.
func (s *Service) Estimate(ctx context.Context, planID, config string) (*cascade.SamplingWallEstimate, error) {
	if s.Runs == nil {
		return nil, fmt.Errorf("estimate: the plans service reads no runs")
	}
	p, err := s.Store.SamplingPlan(ctx, planID)
	if err != nil {
		return nil, err
	}
	if s.Configs != nil {
		c, err := s.Configs.Variant(ctx, config, nil)
		if cascade.ErrorCode(err) == cascade.EINVALID {
			why := strings.TrimPrefix(cascade.ErrorMessage(err), "simConfig: ")
			return nil, cascade.Errorf(cascade.EINVALID, "config: %s", why)
		} else if err != nil {
			return nil, err
		}
		config = c.Name
	}
	work, err := s.Runs.RunWork(ctx, config, RecentRuns)
	if err != nil {
		return nil, fmt.Errorf("estimate plan %s: runs of %s: %w", planID, config, err)
	}
	var samples []sampling.WallSample
	var measuredFull *float64
	for _, w := range work {
		if w.Kernels == 0 || w.Counted < w.Kernels {
			continue // a trace without instruction counts measures nothing
		}
		samples = append(samples, sampling.WallSample{Instructions: float64(w.Instructions), WallSeconds: w.Run.Figures.WallSeconds})
		if measuredFull == nil && w.Run.TraceID == p.TraceID && w.Run.IsFull() {
			measuredFull = cascade.Ptr(w.Run.Figures.WallSeconds)
		}
	}
	if len(samples) == 0 {
		return nil, nil
	}
	rate, err := sampling.MeasureRate(samples)
	if err != nil {
		return nil, nil // no run with instructions and a wall time
	}
	if p.Strata, err = s.Store.SamplingStrata(ctx, p.ID); err != nil {
		return nil, err
	}
	t, err := s.Store.Trace(ctx, p.TraceID)
	if err != nil {
		return nil, err
	}
	in, err := s.Input(ctx, t)
	if err != nil {
		return nil, err
	}
	if len(in.Launches) != p.Launches {
		return nil, cascade.Errorf(cascade.ECONFLICT, "plan %s has %d launches, its trace now %d; plan again", p.ID, p.Launches, len(in.Launches))
	}
	slots, note := 1, "one simulator at a time"
	if s.Concurrency != nil {
		slots, note = s.Concurrency()
	}
	// The segments a sampled run would simulate, cut as it cuts them.
	segs, err := sampling.SegmentInstructions(in, sampling.CutRanges(p, in, sampling.Ranges(p), slots))
	if err != nil {
		return nil, fmt.Errorf("estimate plan %s: %w", p.ID, err)
	}
	var full float64
	for i := range in.Launches {
		full += float64(max(in.Launches[i].WarpInstructions, 0))
	}
	w := sampling.EstimateWall(rate, segs, slots, full)
	e := &cascade.SamplingWallEstimate{Config: config, Runs: rate.Samples, InstructionsPerSecond: rate.PerSecond,
		Segments: w.Segments, Concurrency: w.Concurrency, ConcurrencyNote: note,
		Seconds: w.Seconds, ProcessSeconds: w.ProcessSeconds, FullSeconds: w.FullSeconds, MeasuredFullSeconds: measuredFull}
	if rate.Fitted {
		e.StartupSeconds = cascade.Ptr(rate.Startup)
	}
	return e, nil
}
