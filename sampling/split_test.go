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
	refused := 0
	defer func() {
		if refused > 30 {
			t.Errorf("%d of 300 random traces refused as not worth splitting", refused)
		}
	}()
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
		if err != nil && strings.Contains(err.Error(), "no split of this trace is worth it") {
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkCover(t, segs, n)
		if len(segs) > k {
			t.Fatalf("trial %d: %d segments, asked for %d", trial, len(segs), k)
		}
	}
}

// llmSplitInput is shaped as an LLM step's trace: a heavy prefill (the
// first step, 26 launches, about half the warp instructions), then light
// decode steps; 300 launches, so at most 11 segments.
func llmSplitInput() sampling.Input {
	in := steps(300, 4, "norm", "qkv", "attn", "out", "up", "down")
	for i := range in.Launches {
		in.Launches[i].WarpInstructions = 2_630
		if i < 26 {
			in.Launches[i].WarpInstructions = 27_000
		}
	}
	return in
}

// TestSplitLLMPrefill: asked for as many segments as the trace allows,
// a split of an LLM-like trace does not cut segments whose warm-up is
// the prefill: every segment then weighed as much as the prefill, and the
// prefill was simulated three times (the QA report: 5 segments of 702k,
// 707k, 705k, 584k and 85k of a 1.42M trace). It gives fewer segments,
// none warming up with more than its own launches, within MaxSplitWork
// of the trace's work, and says why.
func TestSplitLLMPrefill(t *testing.T) {
	in := llmSplitInput()
	var total int64
	for _, l := range in.Launches {
		total += l.WarpInstructions
	}
	if max := sampling.MaxSegments(in); max != 11 {
		t.Fatalf("MaxSegments = %d, want 11", max)
	}
	segs, note, err := sampling.SplitNoted(in, 11, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	checkCover(t, segs, len(in.Launches))
	var work, longest int64
	for i, s := range segs {
		var w int64
		for l := s.Start - s.Warmup; l < s.End; l++ {
			w += in.Launches[l].WarpInstructions
		}
		work += w
		longest = max(longest, w)
		var own int64
		for l := s.Start; l < s.End; l++ {
			own += in.Launches[l].WarpInstructions
		}
		if w-own > own {
			t.Errorf("segment %d (%+v) warms up with %d warp instructions, more than its own %d (the prefill again): %v", i, s, w-own, own, segs)
		}
	}
	if float64(work) > sampling.MaxSplitWork*float64(total) {
		t.Errorf("the split simulates %d warp instructions, %.2f times the trace's %d: want at most %.1f: %v", work, float64(work)/float64(total), total, sampling.MaxSplitWork, segs)
	}
	// The first segment holds the prefill and at most a decode step (a
	// cut right after it is moved on).
	if want := int64(26*27_000 + 26*2_630); longest > want {
		t.Errorf("longest segment %d warp instructions, want at most %d (the prefill and a decode step): %v", longest, want, segs)
	}
	if len(segs) == 11 || !strings.Contains(note, "not the 11 asked for") {
		t.Errorf("%d segments, note %q: want fewer than 11 and a note saying why", len(segs), note)
	}
	// Split gives the same segments.
	if again, err := sampling.Split(in, 11, sampling.WarmupStep); err != nil || fmt.Sprint(again) != fmt.Sprint(segs) {
		t.Errorf("Split = %v, %v; SplitNoted %v", again, err, segs)
	}
}

// TestSplitNoteFewer: asked for more segments than shorten the longest,
// Split cuts fewer and says so; asked for what it cuts, it says nothing.
func TestSplitNoteFewer(t *testing.T) {
	in := steps(26*12, 4, "norm", "qkv", "attn", "out", "up", "down")
	segs, note, err := sampling.SplitNoted(in, 5, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	// 312 launches and a step of warm-up: 4 segments of 104 launches at
	// most, warm-up included, and 5 need 104 too (the cuts are at steps).
	if len(segs) != 4 || !strings.Contains(note, "more would not shorten the longest segment") {
		t.Errorf("5 asked: %v, note %q: want 4 and a note", segs, note)
	}
	if _, note, err := sampling.SplitNoted(in, 4, sampling.WarmupStep); err != nil || note != "" {
		t.Errorf("4 asked: note %q, %v: want none", note, err)
	}
}

// TestSplitRefusesWorse: a trace whose every split would simulate more
// than MaxSplitWork times its work is refused, naming split.segments.
func TestSplitRefusesWorse(t *testing.T) {
	in := steps(52, 4, "norm", "qkv", "attn", "out", "up", "down")
	for i := range 26 {
		in.Launches[i].WarpInstructions = 50_000 // a prefill, then one decode step
	}
	_, err := sampling.Split(in, 2, sampling.WarmupStep)
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), "split.segments: no split of this trace is worth it") {
		t.Errorf("Split = %v, want BAD_USER_INPUT naming split.segments", err)
	}
}
