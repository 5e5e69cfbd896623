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

// TestNeedsUntracedContexts: on a two-context trace whose contexts
// repeat kernel ids, interleaved, kernel 2 traced in 0xa and not in 0xb:
// a range of 0xa's kernels 2 to 3 (its span holds 0xb's 2 too) is
// simulated, one of 0xb's kernel 2 refused, named with its context.
func TestNeedsUntracedContexts(t *testing.T) {
	in := sampling.Input{}
	for id := 1; id <= 5; id++ {
		for _, c := range []string{"0xa", "0xb"} {
			in.Launches = append(in.Launches, sampling.Launch{KernelID: id, Context: c, Untraced: c == "0xb" || id > 3})
		}
	}
	a, b := cascade.Ptr("0xa"), cascade.Ptr("0xb")
	plan := cascade.SamplingPlan{ID: "sp2", TraceID: "two"}
	ranges := []cascade.KernelRange{{Context: a, Start: 2, End: 3, FirstLaunch: 2, LastLaunch: 4}}
	if n, err := needsUntraced(plan, ranges, in); n != 7 || err != nil {
		t.Fatalf("0xa's traced kernels 2 and 3: %d, %v", n, err)
	}
	ranges = append(ranges, cascade.KernelRange{Context: b, Start: 2, End: 2, FirstLaunch: 3, LastLaunch: 3})
	_, err := needsUntraced(plan, ranges, in)
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), `plan "sp2" simulates launches the trace has no kernel trace of: kernel ids 2@0xb;`) {
		t.Fatalf("0xb's kernel 2: %v", err)
	}
	u := sampling.UntracedOf("two", ranges, func(i int) (sampling.Launch, bool) { return in.Launches[i], true })
	if u == nil || u.Count != 1 || len(u.Ranges) != 1 || u.Ranges[0] != ranges[1] || u.Launches[0] != (cascade.UntracedLaunch{Launch: 3, KernelID: 2, Context: b}) ||
		!strings.Contains(u.Note, `1 launch that trace "two" has no kernel trace of (kernel ids 2@0xb), in 1 of its 2 trace ranges`) {
		t.Fatalf("UntracedOf: %+v", u)
	}
}
