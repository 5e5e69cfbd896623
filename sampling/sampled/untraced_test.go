package sampled

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// TestNeedsUntraced: a trace without untraced launches takes any plan; one
// with some takes a plan whose ranges are all traced, and refuses one
// whose ranges need an untraced launch of their own context, naming it.
func TestNeedsUntraced(t *testing.T) {
	in := sampling.Input{}
	for i := range 10 {
		in.Launches = append(in.Launches, sampling.Launch{KernelID: i + 1, Context: "0x1"})
	}
	ctx := cascade.Ptr("0x1")
	ranges := []cascade.KernelRange{{Context: ctx, Start: 3, End: 4, FirstLaunch: 2, LastLaunch: 3}, {Context: ctx, Start: 8, End: 8, FirstLaunch: 7, LastLaunch: 7}}
	plan := cascade.SamplingPlan{ID: "sp1"}
	if n, err := needsUntraced(plan, ranges, in); n != 0 || err != nil {
		t.Fatalf("every launch traced: %d, %v", n, err)
	}
	for _, i := range []int{0, 1, 4, 5, 6, 8, 9} {
		in.Launches[i].Untraced = true
	}
	if n, err := needsUntraced(plan, ranges, in); n != 7 || err != nil {
		t.Fatalf("the ranges traced: %d, %v", n, err)
	}
	in.Launches[3].Untraced = true
	ranges = append(ranges, cascade.KernelRange{Context: ctx, Start: 9, End: 10, FirstLaunch: 8, LastLaunch: 9})
	_, err := needsUntraced(plan, ranges, in)
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), `sampling.plan: plan "sp1" simulates launches the trace has no kernel trace of: kernel ids 4@0x1, 9@0x1, 10@0x1;`) {
		t.Fatalf("untraced launches in the ranges: %v", err)
	}
}
