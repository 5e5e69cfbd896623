package sampling

import (
	"math"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// TestMeasureRate: runs on a line wall = 2 + insts/1e6 give the line
// back; runs of one size, or a line below the origin, give the pooled
// ratio without a start-up; runs without a measure take no part.
func TestMeasureRate(t *testing.T) {
	line := []WallSample{{1e6, 3}, {4e6, 6}, {9e6, 11}, {0, 5}, {2e6, 0}}
	r, err := MeasureRate(line)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fitted || r.Samples != 3 || !near(r.PerSecond, 1e6) || !near(r.Startup, 2) {
		t.Errorf("line: got %+v, want 1e6/s and 2 s fitted over 3", r)
	}
	if got := r.Wall(5e6); !near(got, 7) {
		t.Errorf("Wall(5e6) = %v, want 7", got)
	}

	same, err := MeasureRate([]WallSample{{1e6, 2}, {1e6, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if same.Fitted || same.Startup != 0 || !near(same.PerSecond, 2e6/6) {
		t.Errorf("one size: got %+v, want the pooled 2e6/6 per s, not fitted", same)
	}

	// wall = -1 + insts/1e6: a start-up below 0 is not a start-up.
	below, err := MeasureRate([]WallSample{{2e6, 1}, {4e6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if below.Fitted || !near(below.PerSecond, 6e6/4) {
		t.Errorf("below the origin: got %+v, want the pooled ratio", below)
	}

	if _, err := MeasureRate([]WallSample{{0, 1}, {1, 0}, {math.Inf(1), 1}}); err == nil {
		t.Error("no usable run: no error")
	}
}

// TestEstimateWall: segments queue longest first on the first free slot.
func TestEstimateWall(t *testing.T) {
	r := Rate{PerSecond: 1, Startup: 1, Fitted: true}
	// Times 4, 2, 2, 3 on 2 slots, longest first: slot A 4, slot B 3,
	// then a 2 on B (5), the other on A (6). In launch order it was 7:
	// A 4, B 2 then 2, then the 3 on A.
	e := EstimateWall(r, []float64{3, 1, 1, 2}, 2, 100)
	if e.Segments != 4 || e.Concurrency != 2 || !near(e.Seconds, 6) || !near(e.ProcessSeconds, 11) || !near(e.FullSeconds, 101) {
		t.Errorf("2 slots: got %+v, want 6 s wall, 11 s of processes, 101 s full", e)
	}
	if got := LongestFirst([]int64{3, 1, 5, 1, 3}); !slices.Equal(got, []int{2, 0, 4, 1, 3}) {
		t.Errorf("LongestFirst: %v, want [2 0 4 1 3] (equal sizes in their order)", got)
	}
	one := EstimateWall(r, []float64{3, 1, 1, 2}, 1, 100)
	if !near(one.Seconds, 11) {
		t.Errorf("1 slot: got %v s, want 11", one.Seconds)
	}
	all := EstimateWall(r, []float64{3, 1, 1, 2}, 0, 100)
	if all.Concurrency != 4 || !near(all.Seconds, 4) {
		t.Errorf("all at once: got %+v, want 4 at once, 4 s", all)
	}
	many := EstimateWall(r, []float64{3}, 8, 100)
	if many.Concurrency != 1 || !near(many.Seconds, 4) {
		t.Errorf("more slots than segments: got %+v, want 1 at once, 4 s", many)
	}
	if none := EstimateWall(Rate{}, []float64{1}, 1, 1); !math.IsInf(none.Seconds, 1) {
		t.Errorf("no rate: got %v s, want +Inf", none.Seconds)
	}
}

// TestSegmentInstructions: a range counts its own context's launches of
// its kernel ids, not another context's between them.
func TestSegmentInstructions(t *testing.T) {
	in := Input{Launches: []Launch{
		{KernelID: 1, Context: "a", WarpInstructions: 10},
		{KernelID: 1, Context: "b", WarpInstructions: 1000},
		{KernelID: 2, Context: "a", WarpInstructions: 20},
		{KernelID: 3, Context: "a", WarpInstructions: -5},
	}}
	ctx := func(s string) *string { return &s }
	got, err := SegmentInstructions(in, []cascade.KernelRange{
		{Context: ctx("a"), Start: 1, End: 3, FirstLaunch: 0, LastLaunch: 3},
		{Context: ctx("b"), Start: 1, End: 1, FirstLaunch: 1, LastLaunch: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 30 || got[1] != 1000 {
		t.Errorf("got %v, want [30 1000]", got)
	}
	if _, err := SegmentInstructions(in, []cascade.KernelRange{{Start: 1, End: 1, FirstLaunch: 2, LastLaunch: 4}}); err == nil {
		t.Error("a range past the launches: no error")
	}
}
