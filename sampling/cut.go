package sampling

import (
	"slices"

	"github.com/cascade-sim/cascade"
)

// Cutting a dominant segment. A sampled run simulates its segments
// (Ranges) as many at a time as its executor has slots, longest first,
// so it takes at least as long as its longest. When that one holds more
// than the others can fill the other slots with, it is cut in two: the
// first part the segment up to the cut, the second from a warm-up before
// the cut (a representative's: up to the plan's Warmup launches, under a
// step's warp instructions on a plan warmed up by a step) to the
// segment's end. The warm-up's launches are simulated twice; the second
// part's KernelRange.Warmup counts them (with any launch after them
// before its first representative of its own), and a sampled run reads
// no result of those launches from it (SampledRun.SegmentWarmups).

// maxCuts is the most cuts CutRanges makes; minCutGain the least share of
// the wall time (EstimateWall's queue, in warp instructions) a cut must
// take off.
const (
	maxCuts    = 4
	minCutGain = 0.05
)

// CutRanges returns p's ranges (Ranges(p)) cut while a cut shortens,
// by minCutGain at least, the warp instructions the busiest of slots
// simulates (segments queued longest first), up to maxCuts times. A part
// holds at least one representative. With one slot nothing is cut; with
// 0 or fewer, every segment runs at once (a Slurm cluster, as a sampled
// run's estimate takes it), and the longest is cut while that pays.
func CutRanges(p Plan, in Input, ranges []cascade.KernelRange, slots int) []cascade.KernelRange {
	if slots <= 0 {
		slots = len(ranges) + maxCuts
	}
	if slots < 2 || len(in.Launches) != p.Launches {
		return ranges
	}
	rep := make(map[int]bool, p.Samples)
	for h := range p.Strata {
		for _, r := range p.Strata[h].Representatives {
			rep[r.Launch] = true
		}
	}
	warmCap := int64(-1) // no cap
	if p.WarmupStep && p.Launches > 0 {
		warmCap = int64(p.Warmup) * (p.Instructions / int64(p.Launches))
	}
	out := slices.Clone(ranges)
	for range maxCuts {
		sizes, err := SegmentInstructions(in, out)
		if err != nil || len(out) == 0 {
			return out
		}
		longest := 0
		for i := range sizes {
			if sizes[i] > sizes[longest] {
				longest = i
			}
		}
		best, bestSpan := [2]cascade.KernelRange{}, busiest(sizes, slots)
		limit := bestSpan * (1 - minCutGain)
		found := false
		launches := rangeLaunches(in, out[longest])
		prefix := make([]float64, len(launches)+1) // warp instructions of launches[:j]
		for j, l := range launches {
			prefix[j+1] = prefix[j] + float64(max(in.Launches[l].WarpInstructions, 0))
		}
		trial := append(slices.Clone(sizes), 0)
		for k := 1; k < len(launches); k++ {
			a, b, from, ok := cut(in, out[longest], launches, k, rep, p.Warmup, warmCap)
			if !ok {
				continue
			}
			trial[longest], trial[len(sizes)] = prefix[k], prefix[len(launches)]-prefix[from]
			if span := busiest(trial, slots); span <= limit && span < bestSpan {
				best, bestSpan, found = [2]cascade.KernelRange{a, b}, span, true
			}
		}
		if !found {
			return out
		}
		out = slices.Insert(out, longest+1, best[1])
		out[longest] = best[0]
	}
	return out
}

// cut cuts range rg, whose launches (positions) are launches, before its
// k-th: the first part launches[:k], the second launches[from:], from up
// to warm launches
// before launches[k] (within the first part; under warmCap warp
// instructions after the first, when not negative) to the end. Each part
// must count a representative.
func cut(in Input, rg cascade.KernelRange, launches []int, k int, rep map[int]bool, warm int, warmCap int64) (a, b cascade.KernelRange, from int, ok bool) {
	repsA, firstB := 0, -1
	for j, l := range launches {
		switch {
		case !rep[l]:
		case j < k:
			repsA++
		case firstB < 0:
			firstB = j
		}
	}
	if repsA == 0 || firstB < 0 {
		return a, b, 0, false
	}
	w, insts := 0, int64(0)
	for j := k - 1; j >= 0 && w < warm; j-- {
		insts += max(in.Launches[launches[j]].WarpInstructions, 0)
		if warmCap >= 0 && w > 0 && insts > warmCap {
			break
		}
		w++
	}
	from = k - w
	a, b = rg, rg
	a.End, a.LastLaunch, a.Launches, a.Representatives = in.Launches[launches[k-1]].KernelID, launches[k-1], k, repsA
	b.Start, b.FirstLaunch, b.Launches = in.Launches[launches[from]].KernelID, launches[from], len(launches)-from
	b.Representatives, b.Warmup = rg.Representatives-repsA, firstB-from
	return a, b, from, true
}

// rangeLaunches is the positions of rg's launches: those of its context
// and kernel ids from its first launch to its last.
func rangeLaunches(in Input, rg cascade.KernelRange) []int {
	ctx := cascade.Deref(rg.Context)
	var out []int
	for l := rg.FirstLaunch; l <= rg.LastLaunch && l < len(in.Launches); l++ {
		if x := in.Launches[l]; x.Context == ctx && x.KernelID >= rg.Start && x.KernelID <= rg.End {
			out = append(out, l)
		}
	}
	return out
}

// busiest is the warp instructions the busiest of slots simulates of
// segments of sizes: EstimateWall's queue at one instruction a second.
func busiest(sizes []float64, slots int) float64 {
	return EstimateWall(Rate{PerSecond: 1}, sizes, slots, 0).Seconds
}
