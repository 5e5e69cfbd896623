package main

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// realSplitRun is what TestRealAccelSimSplitRun reads of a run.
type realSplitRun struct {
	ID, State string
	Error     *string
	Kernels   []struct {
		KernelID  int
		SimCycles int64
	}
	Figures struct {
		SimCycles   *int64
		WallSeconds *float64
	}
	Split *struct {
		SegmentStarts  []int
		Warmup, Period int
		Segments       []struct{ ID, State string }
	}
}

// TestRealAccelSimSplitRun: a full run split in two on the real simulator,
// through the API as a user launches one, against the full run in one
// piece, on SM6_TITANX and SM7_QV100. A small LLM-like trace built from
// the real vecAdd kernel (a prefill step and four decode steps of one
// layer: 40 launches, a step of 8) is uploaded raw and post-processed; the
// split run's second segment simulates a step before its own launches
// (the prefill, whole).
// Both runs must give every launch, the split run's total within 0.3 % of
// the full run's and each launch within 2 %. (BenchmarkSplitSim measures
// the wall time on the 300-launch trace.)
//
// It simulates the prefill three times on two configs: 5 to 10 minutes of
// two cores, past what CI can spend, so it runs with CASCADE_TEST_SPLIT
// set (`make bench-split` sets it); CI checks the stitching with the
// stand-in simulator (servertests/runs TestSplitRunStitches).
func TestRealAccelSimSplitRun(t *testing.T) {
	if os.Getenv("CASCADE_TEST_SPLIT") == "" {
		t.Skip("CASCADE_TEST_SPLIT is not set: the real simulator's split run takes 5–10 minutes (make bench-split)")
	}
	addr, launches := realLLMTrace(t, tracegen.LLMConfig{Launches: 40, Layers: 1, DecodeSteps: 4})

	const fields = `id state error kernels { kernelId simCycles } figures { simCycles wallSeconds }
		split { segmentStarts warmup period segments { id state } }`
	launch := func(cfg, split string) string {
		var l struct{ LaunchRun struct{ ID string } }
		q := fmt.Sprintf(`mutation { launchRun(input: {traceId: "llm", simConfig: %q, rerun: true%s}) { id } }`, cfg, split)
		if errs := gqlVars(t, addr, q, nil, &l); len(errs) > 0 {
			t.Fatalf("launch %s%s: %v", cfg, split, errs)
		}
		return l.LaunchRun.ID
	}
	configs := []string{"SM6_TITANX", "SM7_QV100"}
	ids := map[string][2]string{}
	for _, cfg := range configs {
		ids[cfg] = [2]string{launch(cfg, ""), launch(cfg, ", split: {segments: 2}")}
	}
	get := func(id string) (r realSplitRun) {
		var out struct{ Run realSplitRun }
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+fields+` } }`, map[string]any{"id": id}, &out)
		return out.Run
	}
	for _, cfg := range configs {
		var full, split realSplitRun
		testkit.Eventually(t, 20*time.Minute, cfg+" runs over", func() bool {
			full, split = get(ids[cfg][0]), get(ids[cfg][1])
			over := func(s string) bool { return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" }
			return over(full.State) && over(split.State)
		})
		if full.State != "SUCCEEDED" || split.State != "SUCCEEDED" {
			t.Fatalf("%s: full run %s (%v), split run %s (%v)", cfg, full.State, full.Error, split.State, split.Error)
		}
		if s := split.Split; s == nil || len(s.Segments) != 2 || s.Period != 8 || s.Warmup != 8 || s.SegmentStarts[1]%8 != 0 {
			t.Fatalf("%s: split %+v: want 2 segments cut at a step, a step (8) of warm-up", cfg, split.Split)
		}
		if len(full.Kernels) != launches || len(split.Kernels) != launches {
			t.Fatalf("%s: %d and %d kernels, want %d", cfg, len(full.Kernels), len(split.Kernels), launches)
		}
		var worst float64
		worstAt := 0
		for i := range full.Kernels {
			f, s := full.Kernels[i], split.Kernels[i]
			if f.KernelID != i+1 || s.KernelID != i+1 || f.SimCycles <= 0 {
				t.Fatalf("%s: launch %d: full %+v, split %+v", cfg, i, f, s)
			}
			if e := math.Abs(float64(s.SimCycles-f.SimCycles)) / float64(f.SimCycles); e > worst {
				worst, worstAt = e, i
			}
		}
		ft, st := float64(*full.Figures.SimCycles), float64(*split.Figures.SimCycles)
		total := (st - ft) / ft
		t.Logf("%s: %d launches in 2 segments (the second from launch %d, after %d of warm-up): total %.0f cycles against %.0f (%+.4f %%), worst launch %d off by %.3f %%; simulator wall %.1f s split (summed) against %.1f s",
			cfg, launches, split.Split.SegmentStarts[1], split.Split.Warmup, st, ft, 100*total, worstAt, 100*worst, *split.Figures.WallSeconds, *full.Figures.WallSeconds)
		if math.Abs(total) > 0.003 {
			t.Errorf("%s: total cycles %+.4f %% off the full run's: want within 0.3 %%", cfg, 100*total)
		}
		if worst > 0.02 {
			t.Errorf("%s: launch %d is %.3f %% off the full run's: want every launch within 2 %%", cfg, worstAt, 100*worst)
		}
	}
}
