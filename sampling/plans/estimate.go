package plans

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// RecentRuns is how many of a config's last timed runs its simulator's
// rate is measured from.
const RecentRuns = 20

// WallEstimate is the estimated wall time of a sampled run of a plan
// under a config on this server, against a full run's.
type WallEstimate struct {
	Config string
	// The simulator's rate, measured from Samples recent runs.
	sampling.Rate
	// The sampled run's segments and wall time, and the full run's.
	sampling.WallEstimate
	// ConcurrencyNote says how Concurrency was decided.
	ConcurrencyNote string
	// MeasuredFull is the wall time of the newest of the measured runs
	// that is a full run of the plan's trace; nil for none.
	MeasuredFull *float64
}

// StartupSeconds is the measured start-up of a simulator process; nil
// when it was not measured (Rate.Fitted).
func (e WallEstimate) StartupSeconds() *float64 {
	if !e.Fitted {
		return nil
	}
	return &e.Startup
}

// Speedup is the full run's estimated wall time over the sampled run's.
func (e WallEstimate) Speedup() float64 {
	if e.Seconds <= 0 {
		return 0
	}
	return e.FullSeconds / e.Seconds
}

// Estimate estimates the wall time of a sampled run of plan planID under
// config on this server: the simulator's rate is measured from the
// config's last RecentRuns timed runs (their warp instructions, as their
// traces count them, over their wall time; sampling.MeasureRate), each
// segment (sampling.Ranges) is one process, and the segments run
// Concurrency at once (sampling.EstimateWall). nil when no run of the
// config can be measured: none finished with a wall time, or their traces
// count no instructions.
func (s *Service) Estimate(ctx context.Context, planID, config string) (*WallEstimate, error) {
	if s.Runs == nil {
		return nil, fmt.Errorf("estimate: the plans service reads no runs")
	}
	p, err := s.Store.SamplingPlan(ctx, planID)
	if err != nil {
		return nil, err
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
	segs, err := sampling.SegmentInstructions(in, sampling.Ranges(p))
	if err != nil {
		return nil, fmt.Errorf("estimate plan %s: %w", p.ID, err)
	}
	slots, note := 1, "one simulator at a time"
	if s.Concurrency != nil {
		slots, note = s.Concurrency()
	}
	var full float64
	for i := range in.Launches {
		full += float64(max(in.Launches[i].WarpInstructions, 0))
	}
	return &WallEstimate{Config: config, Rate: rate, WallEstimate: sampling.EstimateWall(rate, segs, slots, full),
		ConcurrencyNote: note, MeasuredFull: measuredFull}, nil
}
