package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// TestRealAccelSimSplitWarm: a split run without warm-up launches on the
// real simulator, through the API: its second segment starts cold at the
// first decode step, right after the prefill, and the server loads into L2
// first the lines it shares with the launches before it (accelsim/l2warm).
// The segment's history says so, and its launches must give the full
// run's cycles as issue 31 asks of a split run: every launch within 2 %,
// the total within 0.3 %. (With l2warm.WindowShare 3/4 its first launch
// was within 0.3 %; with 4, the share the sampling benchmark's three
// shapes held their goals at, it is 1.5 % fast: this trace's prefill
// nearly fills SM6_TITANX's L2, and the window warms lines the full run
// had lost.)
//
// Like TestRealAccelSimSplitRun it runs with CASCADE_TEST_SPLIT set (a
// full and a split simulation of the trace on SM6_TITANX: minutes).
func TestRealAccelSimSplitWarm(t *testing.T) {
	if os.Getenv("CASCADE_TEST_SPLIT") == "" {
		t.Skip("CASCADE_TEST_SPLIT is not set: the real simulator's split runs take minutes (make bench-split)")
	}
	addr, launches := realLLMTrace(t, tracegen.LLMConfig{Launches: 24, Layers: 1, DecodeSteps: 2})

	type run struct {
		realSplitRun
		Split *struct {
			SegmentStarts []int
			Warmup        int
			Segments      []struct {
				ID, State string
				KernelIds []int
				History   []string
			}
		}
	}
	const fields = `id state error kernels { kernelId simCycles } figures { simCycles wallSeconds }
		split { segmentStarts warmup segments { id state kernelIds history } }`
	launch := func(split string) string {
		var l struct{ LaunchRun struct{ ID string } }
		q := fmt.Sprintf(`mutation { launchRun(input: {traceId: "llm", simConfig: "SM6_TITANX", rerun: true%s}) { id } }`, split)
		if errs := gqlVars(t, addr, q, nil, &l); len(errs) > 0 {
			t.Fatalf("launch%s: %v", split, errs)
		}
		return l.LaunchRun.ID
	}
	fullID, splitID := launch(""), launch(", split: {segments: 2, warmup: 0}")
	get := func(id string) (r run) {
		var o struct{ Run run }
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+fields+` } }`, map[string]any{"id": id}, &o)
		return o.Run
	}
	var full, split run
	testkit.Eventually(t, 20*time.Minute, "runs over", func() bool {
		full, split = get(fullID), get(splitID)
		over := func(s string) bool { return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" }
		return over(full.State) && over(split.State)
	})
	if full.State != "SUCCEEDED" || split.State != "SUCCEEDED" || split.Split == nil || len(split.Split.Segments) != 2 || split.Split.Warmup != 0 {
		t.Fatalf("full run %s (%v), split run %s (%v): %+v", full.State, full.Error, split.State, split.Error, split.Split)
	}
	if len(full.Kernels) != launches || len(split.Kernels) != launches {
		t.Fatalf("%d and %d kernels, want %d", len(full.Kernels), len(split.Kernels), launches)
	}
	second := split.Split.Segments[1]
	start := split.Split.SegmentStarts[1]
	t.Logf("second segment, kernels %v: %q", second.KernelIds, second.History)
	if !slices.ContainsFunc(second.History, func(h string) bool { return strings.Contains(h, " L2 warmed: ") }) {
		t.Errorf("the second segment's history %q says nothing of L2 warmed", second.History)
	}
	var worst float64
	worstAt := 0
	for i := start; i < launches; i++ {
		f, s := full.Kernels[i].SimCycles, split.Kernels[i].SimCycles
		e := float64(s-f) / float64(f)
		if math.Abs(e) > math.Abs(worst) {
			worst, worstAt = e, i
		}
		if i < start+8 {
			t.Logf("launch %d: split %d cycles, full %d (%+.3f %%)", i+1, s, f, 100*e)
		}
	}
	first := float64(split.Kernels[start].SimCycles-full.Kernels[start].SimCycles) / float64(full.Kernels[start].SimCycles)
	ft, st := float64(*full.Figures.SimCycles), float64(*split.Figures.SimCycles)
	t.Logf("the second segment from launch %d without warm-up: its first launch %+.3f %%, worst launch %d %+.3f %%; total %+.4f %%",
		start+1, 100*first, worstAt+1, 100*worst, 100*(st-ft)/ft)
	if math.Abs(worst) > 0.02 {
		t.Errorf("launch %d is %+.3f %% off the full run's: want every launch within 2 %%", worstAt+1, 100*worst)
	}
	if math.Abs(st-ft)/ft > 0.003 {
		t.Errorf("total %+.4f %% off the full run's: want within 0.3 %%", 100*(st-ft)/ft)
	}
}
