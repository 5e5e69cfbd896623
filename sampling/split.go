package sampling

import (
	"fmt"
	"slices"
	"sort"
	"strings"

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

// MaxSplitWork is the most a split run simulates without a note saying
// so, warm-ups included, as a multiple of the trace's warp instructions
// (each segment's warm-up of a step makes a split of one step a segment
// simulate about twice them).
const MaxSplitWork = 1.5

// Split cuts in's launches into at most n segments of consecutive
// launches, each warmed up by warmup launches (0 for none; WarmupStep for
// one step, Period, whole: unlike a plan's step of warm-up it is not
// capped at a mean step's instructions, for a segment's first launches
// may read what a prefill wrote long before them, and one step a segment
// costs little); the first has no launch before it to warm up with. n
// must be 2 to MaxSegments(in). See SplitNoted, which says why it gives
// fewer segments than asked when it does.
func Split(in Input, n, warmup int) ([]SplitSegment, error) {
	segs, _, err := SplitNoted(in, n, warmup)
	return segs, err
}

// SplitNoted is Split, and a sentence saying why it cut fewer segments
// than n, or that the split simulates more than MaxSplitWork times the
// trace's warp instructions ("" when neither). The cuts make the longest
// segment (its warm-up's warp instructions counted) as short as it can
// be, with the fewest segments that make it so, no segment's warm-up
// outweighing its own launches: a cut right after a heavy prefill, which
// would make the prefill the next segment's warm-up (so that it weighed
// as much as the prefill, and the prefill was simulated again by every
// segment cut within a step of it), is moved on until that warm-up is
// light, and a segment more that would shorten nothing is not cut. So the
// first segment, which warms up with nothing, holds the most launches
// (equal launches when none counts any). Segments begin at step
// boundaries, launches of the kernel that begins the trace's last step
// (the launch Period before its end), in its CUDA context, whenever one
// is within a step of where they would begin. A trace no split of which
// keeps its warm-ups light is refused (BAD_USER_INPUT naming
// split.segments).
func SplitNoted(in Input, n, warmup int) ([]SplitSegment, string, error) {
	L := len(in.Launches)
	p := Period(in)
	switch {
	case L == 0:
		return nil, "", cascade.Errorf(cascade.EINVALID, "split: the trace has no launches")
	case L/p < 2:
		return nil, "", cascade.Errorf(cascade.EINVALID, "split: %d launches (a step of %d) are too few to split: a segment holds a step at least", L, p)
	case n < 2:
		return nil, "", cascade.Errorf(cascade.EINVALID, "split.segments: at least 2, got %d (leave split out for a run in one piece)", n)
	case n > L/p:
		return nil, "", cascade.Errorf(cascade.EINVALID, "split.segments: at most %d for this trace (%d launches, a step of %d: a segment holds a step at least), got %d", L/p, L, p, n)
	}
	switch {
	case warmup == WarmupStep:
		warmup = p
	case warmup < 0 || warmup > MaxSplitWarmup:
		return nil, "", cascade.Errorf(cascade.EINVALID, "split.warmup: must be 0 to %d launches, got %d", MaxSplitWarmup, warmup)
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
	s := splitter{cum: cum, warmup: warmup, bounds: bounds, step: p, light: true}
	t := s.least(n)
	cuts, work := s.cutsFor(t)
	heavy := splitter{cum: cum, warmup: warmup, bounds: bounds, step: p}
	ht := heavy.least(n)
	hcuts, hwork := heavy.cutsFor(ht)
	ratio := func(w int64) float64 { return float64(w) / float64(cum[L]) }
	if len(cuts) == 0 {
		if len(hcuts) == 0 {
			return nil, "", cascade.Errorf(cascade.EINVALID, "split.segments: no split of this trace is worth it: no cut makes its longest segment shorter than the whole trace (its warp instructions are in a few launches); leave split out for a run in one piece")
		}
		return nil, "", cascade.Errorf(cascade.EINVALID, "split.segments: no split of this trace is worth it: every cut that shortens it gives a segment whose warm-up (%d launches) outweighs its own launches, simulating heavy launches such as a prefill again (%d segments would simulate %.2f times the trace's warp instructions, warm-ups included); leave split out for a run in one piece",
			warmup, len(hcuts)+1, ratio(hwork))
	}
	segs := make([]SplitSegment, len(cuts)+1)
	for i := range segs {
		start, end := 0, L
		if i > 0 {
			start = cuts[i-1]
		}
		if i < len(cuts) {
			end = cuts[i]
		}
		segs[i] = SplitSegment{Start: start, End: end, Warmup: min(warmup, start)}
	}
	var notes []string
	switch {
	case len(segs) == n:
	case t > ht && len(hcuts) > len(cuts):
		notes = append(notes, fmt.Sprintf("split into %d segments, not the %d asked for: %d would shorten the longest segment (warm-up included) from %d to %d warp instructions only by warming segments up with heavier launches than their own (a prefill simulated again), simulating %.2f times the trace's warp instructions, not %.2f",
			len(segs), n, len(hcuts)+1, t, ht, ratio(hwork), ratio(work)))
	default:
		notes = append(notes, fmt.Sprintf("split into %d segments, not the %d asked for: more would not shorten the longest segment (%d warp instructions, warm-up included), only add warm-up",
			len(segs), n, t))
	}
	if ratio(work) > MaxSplitWork {
		notes = append(notes, fmt.Sprintf("the %d segments simulate %.2f times the trace's warp instructions, warm-ups included (more than %.1f): fewer segments simulate less, at a longer wall time",
			len(segs), ratio(work), MaxSplitWork))
	}
	return segs, strings.Join(notes, "; "), nil
}

// splitter cuts launches into segments of at most a weight each, warm-up
// included: cum[i] is the weight of launches 0..i-1, each segment but the
// first also simulates the warmup launches before it, and a cut is moved
// back to a step boundary (bounds, ascending) when one is within a step.
type splitter struct {
	cum    []int64
	warmup int
	bounds []int
	step   int
	// light refuses a segment whose warm-up outweighs its own launches.
	light bool
}

// cutsFor cuts greedily, each segment as long as it can be while it
// simulates at most t (a segment that begins later reaches at least as
// far, so this is the fewest segments of at most t each), and returns the
// cuts and the weight simulated in all; no cuts and 0 when some launch
// with its warm-up alone outweighs t.
func (s *splitter) cutsFor(t int64) ([]int, int64) {
	L := len(s.cum) - 1
	var cuts []int
	start, work := 0, int64(0)
	for {
		from := s.cum[max(start-s.warmup, 0)]
		// The first launch the segment cannot hold.
		end := sort.Search(L+1, func(i int) bool { return s.cum[i]-from > t }) - 1
		if end >= L {
			if s.light && start > 0 && s.cum[L]-s.cum[start] < s.cum[start]-from {
				return nil, 0
			}
			return cuts, work + s.cum[L] - from
		}
		if end <= start {
			return nil, 0
		}
		if b := s.boundBefore(start, end); b > 0 {
			end = b
		}
		if s.light && start > 0 && s.cum[end]-s.cum[start] < s.cum[start]-from {
			return nil, 0
		}
		cuts = append(cuts, end)
		work += s.cum[end] - from
		start = end
	}
}

// boundBefore is the last step boundary after start and at most end, when
// one is within a step of end; 0 when none is.
func (s *splitter) boundBefore(start, end int) int {
	i, found := slices.BinarySearch(s.bounds, end)
	if found {
		return end
	}
	if i > 0 && s.bounds[i-1] > start && end-s.bounds[i-1] <= s.step {
		return s.bounds[i-1]
	}
	return 0
}

// least is the least t (of the trace's weight at most) cut into n
// segments at most, by bisection: the whole trace in one segment always
// is (and then least is the trace's weight).
func (s *splitter) least(n int) int64 {
	L := len(s.cum) - 1
	lo, hi := int64(0), s.cum[L]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if cuts, work := s.cutsFor(mid); work > 0 && len(cuts)+1 <= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
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
