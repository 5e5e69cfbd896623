package sampling_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/tracegen"
)

// shapeInput is the planning input of n launches of a tracegen shape,
// built from a source kernel of 736 warp instructions a block (the
// vecadd-sm61 trace's).
func shapeInput(t testing.TB, shape string, n int) sampling.Input {
	cfg, ok := tracegen.Shapes[shape]
	if !ok {
		t.Fatalf("no shape %q", shape)
	}
	cfg.Launches = n
	ls, err := tracegen.LLMLaunches(cfg, 736)
	if err != nil {
		t.Fatal(err)
	}
	in := sampling.Input{Launches: make([]sampling.Launch, len(ls))}
	for i, l := range ls {
		in.Launches[i] = sampling.Launch{KernelID: l.KernelID, Name: l.Name, Grid: cascade.Dim3{X: l.Blocks, Y: 1, Z: 1},
			Block: cascade.Dim3{X: 1024, Y: 1, Z: 1}, WarpInstructions: l.Insts, DurationNs: l.DurationNs}
	}
	return in
}

// shapePlan is shapeInput's n launches of shape and their default plan
// (STEM at 1 %, a step of warm-up).
func shapePlan(t testing.TB, shape string, n int) (sampling.Input, sampling.Plan) {
	t.Helper()
	in := shapeInput(t, shape, n)
	p, err := sampling.STEM{Warmup: sampling.WarmupStep}.Plan(in, sampling.Target{})
	if err != nil {
		t.Fatal(err)
	}
	return in, p
}

// TestSavings: the default plan (STEM at 1 %, a step of warm-up) of
// 20,000 launches of every LLM-like shape simulates at least 100× fewer
// warp instructions than the trace holds, warm-up included, within its
// bound.
func TestSavings(t *testing.T) {
	for shape := range tracegen.Shapes {
		in, p := shapePlan(t, shape, 20000)
		checkPlan(t, in, p)
		fewer := float64(p.Instructions) / float64(p.SimulatedInstructions)
		t.Logf("%-8s: %d strata, %d representatives, %d launches simulated (a step is %d): %.0f× fewer warp instructions, expected error %.3f %%",
			shape, len(p.Strata), p.Samples, p.SimulatedLaunches, p.Warmup, fewer, 100*p.ExpectedError)
		if fewer < 100 || p.ExpectedError > sampling.DefaultError {
			t.Errorf("%s: %.0f× fewer, expected error %g", shape, fewer, p.ExpectedError)
		}
	}
}
