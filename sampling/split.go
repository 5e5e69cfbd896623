package sampling

import (
	"slices"
	"sort"

	"github.com/cascade-sim/cascade"
)

// A split run simulates every launch of a trace, in segments of
// consecutive launches that run in parallel: each segment but the first
// simulates a step of the program before its own launches (their results
// discarded), so that the caches hold what the launches before it would
// have left (package sampling/sampled stitches the segments' results).
// Split cuts the launches into those segments.

// SplitSegment is one segment of a split run: it gives the results of
// launches Start to End-1, and simulates Warmup launches before Start
// first.
type SplitSegment struct {
	Start, End int
	Warmup     int
}

// MaxSplitWarmup is the most launches a split run's segment warms up with.
const MaxSplitWarmup = 4096

// MaxSegments is how many segments in's launches can be split into: one
// step (Period) of launches each at least.
func MaxSegments(in Input) int {
	if len(in.Launches) == 0 {
		return 0
	}
	return len(in.Launches) / Period(in)
}

// Split cuts in's launches into n segments of consecutive launches, each
// warmed up by warmup launches (0 for none; WarmupStep for one step,
// Period, whole: unlike a plan's step of warm-up it is not capped at a
// mean step's instructions, for a segment's first launches may read what
// a prefill wrote long before them, and one step a segment costs little);
// the first has no launch before it to warm up with. The segments
// simulate about equal warp instructions, their warm-up's included, so
// the first holds the most launches (equal launches when none counts
// any), and begin at step boundaries: launches of the kernel that begins
// the trace's last step (the launch Period before its end), in its CUDA
// context, whenever one is near. n must be 2 to MaxSegments(in).
func Split(in Input, n, warmup int) ([]SplitSegment, error) {
	L := len(in.Launches)
	p := Period(in)
	switch {
	case L == 0:
		return nil, cascade.Errorf(cascade.EINVALID, "split: the trace has no launches")
	case L/p < 2:
		return nil, cascade.Errorf(cascade.EINVALID, "split: %d launches (a step of %d) are too few to split: a segment holds a step at least", L, p)
	case n < 2:
		return nil, cascade.Errorf(cascade.EINVALID, "split.segments: at least 2, got %d (leave split out for a run in one piece)", n)
	case n > L/p:
		return nil, cascade.Errorf(cascade.EINVALID, "split.segments: at most %d for this trace (%d launches, a step of %d: a segment holds a step at least), got %d", L/p, L, p, n)
	}
	switch {
	case warmup == WarmupStep:
		warmup = p
	case warmup < 0 || warmup > MaxSplitWarmup:
		return nil, cascade.Errorf(cascade.EINVALID, "split.warmup: must be 0 to %d launches, got %d", MaxSplitWarmup, warmup)
	}

	// cum[i] is the weight of launches 0..i-1.
	cum := make([]int64, L+1)
	for i := range in.Launches {
		cum[i+1] = cum[i] + in.Launches[i].instructions()
	}
	if cum[L] == 0 {
		for i := range cum {
			cum[i] = int64(i)
		}
	}
	// Step boundaries: launches of the kernel that begins the last step.
	head := &in.Launches[L-p]
	var bounds []int
	if p > 1 {
		for i := 1; i < L; i++ {
			if l := &in.Launches[i]; l.Name == head.Name && l.Context == head.Context {
				bounds = append(bounds, i)
			}
		}
	}
	cuts := []int{0}
	snap := func(i int) int { return nearest(bounds, min(max(i, 1), L-1), p) }
	for _, c := range balancedCuts(cum, n, warmup, snap) {
		if c <= cuts[len(cuts)-1] {
			continue // two cuts on one boundary: one segment fewer
		}
		cuts = append(cuts, c)
	}
	segs := make([]SplitSegment, len(cuts))
	for i, c := range cuts {
		end := L
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		segs[i] = SplitSegment{Start: c, End: end, Warmup: min(warmup, c)}
	}
	return segs, nil
}

// balancedCuts are the n-1 launches where segments of about equal
// simulated instructions begin, each but the first counting the warmup
// launches before it that it simulates too: the first segment, which
// warms up with nothing, holds more launches than the others. (Equal
// launches a segment would leave the others a warm-up longer, and the
// split run as long as its longest segment.) cum[i] is the weight of
// launches 0..i-1; snap moves a cut to where a segment may begin (a
// step's start).
func balancedCuts(cum []int64, n, warmup int, snap func(int) int) []int {
	L := len(cum) - 1
	// cutsFor cuts greedily at segments of at most t simulated, and
	// returns what is left for the last.
	cutsFor := func(t int64) ([]int, int64) {
		cuts := make([]int, 0, n-1)
		from := int64(0) // the weight before the segment's first simulated launch
		for range n - 1 {
			c := snap(sort.Search(L+1, func(i int) bool { return cum[i]-from >= t }))
			cuts = append(cuts, c)
			from = cum[max(c-warmup, 0)]
		}
		return cuts, cum[L] - from
	}
	// The least t whose last segment fits in it too.
	lo, hi := cum[L]/int64(n), cum[L]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, last := cutsFor(mid); last <= mid {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	cuts, _ := cutsFor(lo)
	return cuts
}

// nearest is the boundary of bounds (ascending) nearest ideal, when one is
// within a step of it; ideal itself when none is.
func nearest(bounds []int, ideal, step int) int {
	i, _ := slices.BinarySearch(bounds, ideal)
	best, dist := ideal, step+1
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(bounds) {
			if d := max(bounds[j]-ideal, ideal-bounds[j]); d < dist {
				best, dist = bounds[j], d
			}
		}
	}
	return best
}
