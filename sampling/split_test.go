package sampling_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// checkCover fails unless segs are consecutive, none empty, and cover
// launches 0 to n-1 once.
func checkCover(t *testing.T, segs []sampling.SplitSegment, n int) {
	t.Helper()
	next := 0
	for i, s := range segs {
		if s.Start != next || s.End <= s.Start || s.Warmup < 0 || s.Warmup > s.Start {
			t.Fatalf("segment %d of %v: want consecutive, non-empty segments from 0 to %d", i, segs, n)
		}
		next = s.End
	}
	if next != n {
		t.Fatalf("segments %v end at %d, want %d", segs, next, n)
	}
}

// TestSplitAtSteps: a trace of whole steps is cut where steps begin, into
// the segments asked for, each but the first warmed up by a step; the
// segments' simulated launches (their warm-up too) are about equal, so
// the first, with no warm-up, is the longest.
func TestSplitAtSteps(t *testing.T) {
	in := steps(26*12, 4, "norm", "qkv", "attn", "out", "up", "down")
	segs, err := sampling.Split(in, 4, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, segs, len(in.Launches))
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4: %v", len(segs), segs)
	}
	for i, s := range segs {
		if i > 0 && (in.Launches[s.Start].Name != "embed" || s.Warmup != 26) {
			t.Errorf("segment %d starts at launch %d (%s) with %d of warm-up, want a step's start (embed) and 26", i, s.Start, in.Launches[s.Start].Name, s.Warmup)
		}
		// 312 launches and three steps of warm-up in four: 97.5 each,
		// to the step (26 launches) nearest.
		if n := s.End - s.Start + s.Warmup; n < 78 || n > 104 {
			t.Errorf("segment %d simulates %d launches (%d of warm-up), want 78 to 104 (a step of 97.5)", i, n, s.Warmup)
		}
	}
	if first, last := segs[0], segs[3]; first.End-first.Start <= last.End-last.Start {
		t.Errorf("segments %v: the first, with no warm-up, should hold more launches than the last", segs)
	}
	if segs[0].Warmup != 0 {
		t.Errorf("the first segment warms up with %d launches, want 0", segs[0].Warmup)
	}
	// A warm-up of launches asked for, and none.
	for _, w := range []int{5, 0} {
		segs, err := sampling.Split(in, 3, w)
		if err != nil {
			t.Fatal(err)
		}
		if segs[1].Warmup != w || segs[2].Warmup != w {
			t.Errorf("warm-up %d: got %v", w, segs)
		}
	}
}

// TestSplitBalancesInstructions: segments simulate about equal warp
// instructions (their warm-up's too), not launches: a heavy first step
// makes the first segment short, and keeps it out of the second's
// warm-up.
func TestSplitBalancesInstructions(t *testing.T) {
	in := steps(26*10, 4, "norm", "qkv", "attn", "out", "up", "down")
	for i := range 26 {
		in.Launches[i].WarpInstructions = 20_000 // a prefill
	}
	segs, err := sampling.Split(in, 2, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, segs, len(in.Launches))
	// 520,000 + 234,000 instructions. Cut after the prefill (26), the
	// second segment would simulate the prefill as its warm-up: 754,000
	// against 520,000. Cut a step later (52), 546,000 and 234,000: the
	// longest segment is shorter.
	if segs[1].Start != 52 {
		t.Errorf("second segment starts at launch %d, want 52 (its warm-up then is a decode step, not the prefill): %v", segs[1].Start, segs)
	}
	// Its step of warm-up is a whole step, however many instructions.
	if segs[1].Warmup != 26 {
		t.Errorf("second segment warms up with %d launches, want 26 (a step, whole)", segs[1].Warmup)
	}
}

// TestSplitCountsWarmup: two segments of a trace of equal launches are
// cut so that each simulates half of the launches plus half a warm-up:
// the second, which simulates its step of warm-up too, starts after the
// middle (on 300 launches of a 6-launch step, at 156, not at 150).
func TestSplitCountsWarmup(t *testing.T) {
	in := steps(300, 1, "qkv", "attn", "up", "down")
	segs, err := sampling.Split(in, 2, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, segs, len(in.Launches))
	if p := sampling.Period(in); p != 6 || segs[1].Warmup != 6 {
		t.Fatalf("step %d, segments %v: want a step of 6 launches of warm-up", p, segs)
	}
	if segs[1].Start != 156 {
		t.Errorf("the second segment starts at %d, want 156 (153 simulated launches each, to the step): %v", segs[1].Start, segs)
	}
}

// TestSplitRefuses: too few launches, too many or too few segments, a
// bad warm-up, each named.
func TestSplitRefuses(t *testing.T) {
	in := steps(26*3, 4, "norm", "qkv", "attn", "out", "up", "down")
	if got := sampling.MaxSegments(in); got != 3 {
		t.Errorf("MaxSegments = %d, want 3", got)
	}
	cases := []struct {
		in     sampling.Input
		n, w   int
		substr string
	}{
		{in, 1, 0, "split.segments: at least 2"},
		{in, 4, 0, "split.segments: at most 3"},
		{in, 2, -5, "split.warmup"},
		{in, 2, sampling.MaxSplitWarmup + 1, "split.warmup"},
		{steps(30, 4, "norm", "qkv", "attn", "out", "up", "down"), 2, 0, "too few to split"},
		{sampling.Input{}, 2, 0, "no launches"},
	}
	for _, c := range cases {
		_, err := sampling.Split(c.in, c.n, c.w)
		if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), c.substr) {
			t.Errorf("Split(%d launches, %d, %d) = %v, want BAD_USER_INPUT with %q", len(c.in.Launches), c.n, c.w, err, c.substr)
		}
	}
}

// TestSplitCovers: on traces with and without a step, of any size and
// instructions, segments always cover every launch once.
func TestSplitCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	for trial := range 300 {
		n := 2 + rng.IntN(400)
		var in sampling.Input
		names := 1 + rng.IntN(40)
		for i := range n {
			in.Launches = append(in.Launches, sampling.Launch{KernelID: i + 1, Name: fmt.Sprint("k", rng.IntN(names)), WarpInstructions: int64(rng.IntN(3) * rng.IntN(1000))})
		}
		max := sampling.MaxSegments(in)
		if max < 2 {
			continue
		}
		k := 2 + rng.IntN(max-1)
		segs, err := sampling.Split(in, k, sampling.WarmupStep)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkCover(t, segs, n)
		if len(segs) > k {
			t.Fatalf("trial %d: %d segments, asked for %d", trial, len(segs), k)
		}
	}
}
