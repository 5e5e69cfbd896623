package sampling

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// How long a sampled run takes: each segment (a range of Ranges) is one
// simulator process, and a process takes a start-up (reading its config
// and kernel list, building the GPU model) and a time per simulated warp
// instruction. Both are measured from finished runs of the config on
// this server, wall = a + b·instructions by least squares; the segments
// queue longest first (LongestFirst) and run up to the server's
// concurrency at once.

// WallSample is a finished simulator process: the warp instructions it
// simulated and its wall time.
type WallSample struct {
	Instructions float64
	WallSeconds  float64
}

// Rate is the simulator's measured speed: WallSeconds = Startup +
// Instructions / PerSecond.
type Rate struct {
	// Samples is how many runs it was measured from.
	Samples int
	// PerSecond is the warp instructions simulated a second.
	PerSecond float64
	// Startup is the seconds a process takes besides its instructions;
	// valid only when Fitted.
	Startup float64
	// Fitted reports whether Startup was measured: a least-squares fit
	// over at least two runs of different sizes that gave a start-up of
	// 0 s or more. Otherwise Startup is 0 and PerSecond is the runs'
	// instructions over their wall time, start-up included.
	Fitted bool
}

// MeasureRate measures the simulator's rate from finished runs. Samples
// without instructions or wall time take no part; none left is an error.
func MeasureRate(samples []WallSample) (Rate, error) {
	var xs, ys []float64
	for _, s := range samples {
		if s.Instructions > 0 && s.WallSeconds > 0 && !math.IsInf(s.Instructions, 0) && !math.IsInf(s.WallSeconds, 0) {
			xs, ys = append(xs, s.Instructions), append(ys, s.WallSeconds)
		}
	}
	if len(xs) == 0 {
		return Rate{}, fmt.Errorf("measure rate: no run with both simulated instructions and a wall time")
	}
	var sx, sy float64
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
	}
	r := Rate{Samples: len(xs), PerSecond: sx / sy}
	n := float64(len(xs))
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for i := range xs {
		dx := xs[i] - mx
		sxx += dx * dx
		sxy += dx * (ys[i] - my)
	}
	// Different sizes, relative to their scale, and a positive slope
	// with a start-up of 0 or more: else the pooled ratio stands.
	if len(xs) >= 2 && sxx > 1e-12*mx*mx*n && sxy > 0 {
		b := sxy / sxx
		if a := my - b*mx; a >= 0 {
			r.PerSecond, r.Startup, r.Fitted = 1/b, a, true
		}
	}
	return r, nil
}

// Wall is the wall time in seconds of one process simulating instructions warp
// instructions at rate r.
func (r Rate) Wall(instructions float64) float64 {
	if r.PerSecond <= 0 {
		return math.Inf(1)
	}
	return r.Startup + instructions/r.PerSecond
}

// WallEstimate is the estimated wall time of a sampled run.
type WallEstimate struct {
	// Segments is how many simulator processes it runs; Concurrency how
	// many of them at once.
	Segments, Concurrency int
	// Seconds is its wall time: the segments queued longest first, each
	// started on the first slot free. ProcessSeconds is the sum of the
	// segments' times, what they take one after another.
	Seconds, ProcessSeconds float64
	// FullSeconds is a full run's: one process of every launch.
	FullSeconds float64
}

// EstimateWall estimates the wall time of a sampled run whose segments
// simulate segments warp instructions each, queued longest first,
// concurrency at once (0 or less: all at once), against a full run of
// full warp instructions.
func EstimateWall(r Rate, segments []float64, concurrency int, full float64) WallEstimate {
	if concurrency <= 0 || concurrency > len(segments) {
		concurrency = max(1, len(segments))
	}
	e := WallEstimate{Segments: len(segments), Concurrency: concurrency, FullSeconds: r.Wall(full)}
	free := make([]float64, concurrency) // when each slot is free next
	for _, i := range LongestFirst(segments) {
		t := r.Wall(segments[i])
		e.ProcessSeconds += t
		first := 0
		for i := range free {
			if free[i] < free[first] {
				first = i
			}
		}
		free[first] += t
		e.Seconds = max(e.Seconds, free[first])
	}
	return e
}

// SegmentInstructions is the warp instructions each range of ranges
// simulates: those of its launches in in (consecutive kernel ids of one
// context from its first launch to its last), as a sampled run's segment
// simulates them. A range out of in's launches is an error.
func SegmentInstructions(in Input, ranges []cascade.KernelRange) ([]float64, error) {
	out := make([]float64, len(ranges))
	for i, rg := range ranges {
		if rg.FirstLaunch < 0 || rg.LastLaunch >= len(in.Launches) || rg.FirstLaunch > rg.LastLaunch {
			return nil, fmt.Errorf("segment %d: launches %d to %d are not launches of the trace's %d", i+1, rg.FirstLaunch, rg.LastLaunch, len(in.Launches))
		}
		ctx := cascade.Deref(rg.Context)
		for l := rg.FirstLaunch; l <= rg.LastLaunch; l++ {
			if x := in.Launches[l]; x.Context == ctx && x.KernelID >= rg.Start && x.KernelID <= rg.End {
				out[i] += float64(max(x.WarpInstructions, 0))
			}
		}
	}
	return out, nil
}

// LongestFirst is the order segments are queued in: the indices of
// sizes, largest first, equal ones in their order. With fewer slots than
// segments, the longest started first end with the rest spread around
// them (a makespan within 4/3 of the least, Graham's bound), where
// launch order could leave the longest, often a prefill's, for last. On
// the 300-launch plans of layers3, 219 against 262 thousand warp
// instructions on the busiest of two slots.
func LongestFirst[T int64 | float64](sizes []T) []int {
	at := make([]int, len(sizes))
	for i := range at {
		at[i] = i
	}
	slices.SortStableFunc(at, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	return at
}
