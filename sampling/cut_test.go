package sampling_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/tracegen"
)

// busiest is the warp instructions the busier of two slots simulates of
// ranges (EstimateWall's queue at one instruction a second, no start-up).
func busiest(t *testing.T, in sampling.Input, ranges []cascade.KernelRange) float64 {
	t.Helper()
	segs, err := sampling.SegmentInstructions(in, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return sampling.EstimateWall(sampling.Rate{PerSecond: 1}, segs, 2, 1).Seconds
}

// longest is the warp instructions of the longest segment of ranges.
func longest(t *testing.T, in sampling.Input, ranges []cascade.KernelRange) float64 {
	t.Helper()
	segs, err := sampling.SegmentInstructions(in, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Max(segs)
}

// TestCutRanges: on two slots, the default plan of 300 launches of every
// LLM-like shape is cut only where the busier slot does 5 % less for it
// (requests and quiet, each with one segment most of the work); each part
// lies in a range of the plan, each representative is counted by one
// part (among its launches after its Warmup ones), and what a part shares
// with the part before it is its warm-up. One slot cuts nothing.
func TestCutRanges(t *testing.T) {
	for shape := range tracegen.Shapes {
		in, p := shapePlan(t, shape, 300)
		ranges := sampling.Ranges(p)
		if got := sampling.CutRanges(p, in, ranges, 1); !reflect.DeepEqual(got, ranges) {
			t.Fatalf("%s: one slot cut %+v into %+v", shape, ranges, got)
		}
		cut := sampling.CutRanges(p, in, ranges, 2)
		before, after := busiest(t, in, ranges), busiest(t, in, cut)
		t.Logf("%-8s: %d ranges, %d cut; the busier of two slots %.0f → %.0f thousand warp instructions", shape, len(ranges), len(cut), before/1000, after/1000)
		switch {
		case len(cut) == len(ranges) && !reflect.DeepEqual(cut, ranges):
			t.Errorf("%s: ranges changed without a cut: %+v", shape, cut)
		case len(cut) > len(ranges) && after > 0.95*before:
			t.Errorf("%s: cut for %.0f → %.0f", shape, before, after)
		case (shape == "requests" || shape == "quiet") && len(cut) == len(ranges):
			t.Errorf("%s: its longest segment was not cut", shape)
		}

		// All at once (0 slots, a Slurm cluster): the longest segment is
		// cut when that shortens it, never lengthened.
		if whole, all := longest(t, in, ranges), longest(t, in, sampling.CutRanges(p, in, ranges, 0)); all > whole || (shape == "requests" && all >= whole) {
			t.Errorf("%s: all at once, the longest segment %.0f → %.0f warp instructions", shape, whole, all)
		}

		rep := map[int]int{} // how many parts count each representative
		for _, st := range p.Strata {
			for _, r := range st.Representatives {
				rep[r.Launch] = 0
			}
		}
		simulated := map[int]bool{}
		for _, rg := range ranges {
			for l := rg.FirstLaunch; l <= rg.LastLaunch; l++ {
				simulated[l] = true
			}
		}
		for k, part := range cut {
			reps := 0
			n := 0
			for l := part.FirstLaunch; l <= part.LastLaunch; l++ {
				if !simulated[l] {
					t.Fatalf("%s: part %+v simulates launch %d, which no range of the plan does", shape, part, l)
				}
				if _, ok := rep[l]; ok && n >= part.Warmup {
					rep[l]++
					reps++
				}
				if k > 0 && cut[k-1].Context == part.Context && part.Start <= cut[k-1].End && l <= cut[k-1].LastLaunch && n >= part.Warmup {
					t.Errorf("%s: part %+v counts launch %d, which the part before it simulates", shape, part, l)
				}
				n++
			}
			if reps != part.Representatives || reps == 0 {
				t.Errorf("%s: part %+v counts %d representatives", shape, part, reps)
			}
		}
		for l, n := range rep {
			if n != 1 {
				t.Errorf("%s: representative %d counted by %d parts", shape, l, n)
			}
		}
	}
}
