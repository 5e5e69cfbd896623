package sampling_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// TestRanges: representatives and warm-up launches of consecutive kernel
// ids of one context make one range; a gap, or another context, starts
// another; a launch that both warms up and represents is traced once.
func TestRanges(t *testing.T) {
	c1, c2 := cascade.Ptr("0x1"), cascade.Ptr("0x2")
	rep := func(launch, id int, ctx *string, warm ...int) cascade.SamplingRepresentative {
		r := cascade.SamplingRepresentative{Launch: launch, KernelID: id, Context: ctx, Weight: 1}
		for _, w := range warm {
			r.Warmup = append(r.Warmup, cascade.SamplingLaunch{Launch: w, KernelID: id - (launch - w)})
		}
		return r
	}
	p := sampling.Plan{ID: "sp1", TraceID: "llm", Method: cascade.SamplingSTEM, Samples: 5, Launches: 100, Strata: []cascade.SamplingStratum{
		{Name: "a", Representatives: []cascade.SamplingRepresentative{rep(10, 11, c1, 9), rep(40, 41, c1, 39)}},
		{Name: "b", Representatives: []cascade.SamplingRepresentative{rep(11, 12, c1, 10), rep(13, 14, c1, 12)}},
		{Name: "c", Representatives: []cascade.SamplingRepresentative{rep(60, 1, c2)}},
	}}
	want := []cascade.KernelRange{
		{Context: c1, Start: 10, End: 14, FirstLaunch: 9, LastLaunch: 13, Launches: 5, Representatives: 3, Warmup: 1},
		{Context: c1, Start: 40, End: 41, FirstLaunch: 39, LastLaunch: 40, Launches: 2, Representatives: 1, Warmup: 1},
		{Context: c2, Start: 1, End: 1, FirstLaunch: 60, LastLaunch: 60, Launches: 1, Representatives: 1},
	}
	if got := sampling.Ranges(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("ranges %+v, want %+v", got, want)
	}

	list := sampling.TraceList(p)
	var lines []string
	for l := range strings.Lines(list) {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	wantLines := []string{
		"DYNAMIC_KERNEL_LIMIT_START=10 DYNAMIC_KERNEL_LIMIT_END=14 TERMINATE_UPON_LIMIT=1",
		"DYNAMIC_KERNEL_LIMIT_START=40 DYNAMIC_KERNEL_LIMIT_END=41 TERMINATE_UPON_LIMIT=1",
		"DYNAMIC_KERNEL_LIMIT_START=1 DYNAMIC_KERNEL_LIMIT_END=1 TERMINATE_UPON_LIMIT=1",
	}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Fatalf("trace list lines %q, want %q; list:\n%s", lines, wantLines, list)
	}
	for _, s := range []string{"plan sp1 of trace llm", "5 representatives and 3 warm-up launches", "# context 0x2, launches 60-60: 1 representative(s), 0 warm-up"} {
		if !strings.Contains(list, s) {
			t.Fatalf("trace list lacks %q:\n%s", s, list)
		}
	}

	// With the launches the L2 warming reads: 36-38 before the second
	// range joins it (its warm-up count unchanged), 8 joins the first, 12
	// is traced already (a warm-up, counted once, as that), 58 stays a
	// range of its own, of warming only.
	warming := []sampling.Traced{{Launch: 38, KernelID: 39, Context: c1}, {Launch: 37, KernelID: 38, Context: c1},
		{Launch: 36, KernelID: 37, Context: c1}, {Launch: 8, KernelID: 9, Context: c1}, {Launch: 12, KernelID: 13, Context: c1},
		{Launch: 58, KernelID: 30, Context: c1}}
	wantWarmed := []cascade.KernelRange{
		{Context: c1, Start: 9, End: 14, FirstLaunch: 8, LastLaunch: 13, Launches: 6, Representatives: 3, Warmup: 1, Warming: 1},
		{Context: c1, Start: 37, End: 41, FirstLaunch: 36, LastLaunch: 40, Launches: 5, Representatives: 1, Warmup: 1, Warming: 3},
		{Context: c1, Start: 30, End: 30, FirstLaunch: 58, LastLaunch: 58, Launches: 1, Warming: 1},
		{Context: c2, Start: 1, End: 1, FirstLaunch: 60, LastLaunch: 60, Launches: 1, Representatives: 1},
	}
	if got := sampling.RangesWarmed(p, warming); !reflect.DeepEqual(got, wantWarmed) {
		t.Fatalf("ranges warmed %+v, want %+v", got, wantWarmed)
	}
	list = sampling.TraceListWarmed(p, wantWarmed, "SM7_QV100 (L2 6144 KB)", true)
	for _, s := range []string{"5 representatives and 3 warm-up launches", "And 5 launches the L2 warming before a segment reads, never simulated, for L2s up to SM7_QV100 (L2 6144 KB)'s",
		"# context 0x1, launches 36-40: 1 representative(s), 1 warm-up, 3 for L2 warming", "DYNAMIC_KERNEL_LIMIT_START=37 DYNAMIC_KERNEL_LIMIT_END=41 TERMINATE_UPON_LIMIT=1"} {
		if !strings.Contains(list, s) {
			t.Fatalf("trace list with warming lacks %q:\n%s", s, list)
		}
	}
	if list := sampling.TraceListWarmed(p, sampling.Ranges(p), "", false); !strings.Contains(list, "# Without the launches the L2 warming") {
		t.Fatalf("trace list without warming does not say so:\n%s", list)
	}
	if strings.Contains(sampling.TraceList(p), "L2 warming") {
		t.Fatalf("a trace list of a plan whose segments need no warming mentions it:\n%s", sampling.TraceList(p))
	}
}

// TestRangesOfPlan: the ranges of a real plan hold exactly its simulated
// launches, each in one range of consecutive kernel ids.
func TestRangesOfPlan(t *testing.T) {
	in := llmTrace(newRand(4), 50000, 20, true)
	for i := range in.Launches {
		if i >= 30000 {
			in.Launches[i].Context = "0xb"
			in.Launches[i].KernelID = i - 30000 + 1
		}
	}
	p, err := sampling.STEM{Warmup: 2}.Plan(in, sampling.Target{Error: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	for _, s := range p.Strata {
		for _, r := range s.Representatives {
			want[r.Launch] = true
			for _, w := range r.Warmup {
				want[w.Launch] = true
			}
		}
	}
	got := map[int]bool{}
	ranges := sampling.Ranges(p)
	for _, r := range ranges {
		if r.End-r.Start != r.LastLaunch-r.FirstLaunch || r.Launches != r.End-r.Start+1 {
			t.Fatalf("range %+v: not a run of consecutive launches", r)
		}
		for i := r.FirstLaunch; i <= r.LastLaunch; i++ {
			l := in.Launches[i]
			if got[i] || l.KernelID != r.Start+i-r.FirstLaunch || l.Context != cascade.Deref(r.Context) {
				t.Fatalf("range %+v: launch %d (kernel %d of %q) twice or not its", r, i, l.KernelID, l.Context)
			}
			got[i] = true
		}
	}
	if !reflect.DeepEqual(got, want) || len(got) != p.SimulatedLaunches {
		t.Fatalf("ranges hold %d launches, the plan simulates %d (%d)", len(got), len(want), p.SimulatedLaunches)
	}
	if n := strings.Count(sampling.TraceList(p), "\nDYNAMIC_KERNEL_LIMIT_START="); n != len(ranges) {
		t.Fatalf("trace list: %d ranges, want %d", n, len(ranges))
	}
	t.Log(fmt.Sprintf("%d launches to trace in %d ranges", len(got), len(ranges)))
}
