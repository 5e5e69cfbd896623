package main

import (
	"math"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// realSampled is what TestRealAccelSimSampledRun reads of a sampled run.
type realSampled struct {
	ID, State string
	Error     *string
	Progress  struct{ KernelsDone, KernelsTotal int }
	Kernels   []struct {
		KernelID      int
		SimCycles     int64
		Simulated     *bool
		ProjectedFrom *int
		FullCycles    *int64
	}
	Sampling *struct {
		Representatives int
		Segments        []struct {
			ID, State string
			KernelIds []int
			History   []string
		}
		ProjectedCycles, CiLowCycles, CiHighCycles *float64
		SimulatorSeconds                           float64
		FullRunSecondsEstimate                     *float64
		Check                                      *struct {
			FullRun                        struct{ ID, State string }
			FullCycles, TotalErrorPct      float64
			BeyondLatencyErrorPct          *float64
			LaunchLatencyCycles            *int
			InsideInterval                 bool
			KernelsCompared                int
			KernelMape, MaxKernelErrorPct  float64
			MeasuredMape, FullMeasuredMape *float64
		}
	}
}

const realSampledFields = `id state error progress { kernelsDone kernelsTotal }
	kernels { kernelId simCycles simulated projectedFrom fullCycles }
	sampling { representatives segments { id state kernelIds history } projectedCycles ciLowCycles ciHighCycles simulatorSeconds fullRunSecondsEstimate
		check { fullRun { id state } fullCycles totalErrorPct beyondLatencyErrorPct launchLatencyCycles insideInterval
			kernelsCompared kernelMape maxKernelErrorPct measuredMape fullMeasuredMape } }`

// TestRealAccelSimSampledRun: a sampled run on the real simulator, through
// the API as a user launches one. A small LLM-like trace built from the
// real vecAdd kernel (a prefill step and two decode steps of one layer)
// is uploaded raw, post-processed, planned with a step of warm-up, and
// launched sampled with validate on SM6_TITANX: its segments and the full
// run simulate on the real accel-sim.out, and the sampled run succeeds
// with every launch projected, the check against the full run computed
// from both runs' kernels, and the full total inside the stated interval.
// (make bench-sampling measures the error on the 300-launch trace.)
func TestRealAccelSimSampledRun(t *testing.T) {
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	addr, launches := realLLMTrace(t, tracegen.LLMConfig{Launches: 24, Layers: 1, DecodeSteps: 2})

	var p struct {
		PlanSampling struct {
			ID      string
			Samples int
			Warmup  int
		}
	}
	if errs := gqlVars(t, addr, `mutation { planSampling(traceId: "llm", target: {error: 0.02}, warmupStep: true) { id samples warmup } }`, nil, &p); len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	if p.PlanSampling.Warmup < 2 || p.PlanSampling.Samples == 0 || p.PlanSampling.Samples >= launches {
		t.Fatalf("plan %+v of %d launches: want a step of warm-up and fewer representatives than launches", p.PlanSampling, launches)
	}
	var l struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(t, addr, `mutation($p: ID!) { launchRun(input: {traceId: "llm", simConfig: "SM6_TITANX", sampling: {plan: $p, validate: true}}) { id } }`,
		map[string]any{"p": p.PlanSampling.ID}, &l); len(errs) > 0 {
		t.Fatalf("launch: %v", errs)
	}
	var r struct{ Run realSampled }
	testkit.Eventually(t, 15*time.Minute, "sampled run and its check", func() bool {
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+realSampledFields+` } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
		return r.Run.State == "FAILED" || r.Run.State == "CANCELLED" ||
			r.Run.State == "SUCCEEDED" && r.Run.Sampling != nil && r.Run.Sampling.Check != nil
	})
	// Read once more: a response's fields are resolved concurrently, so
	// the one that first had the check may have read the kernels a moment
	// before the validation run succeeded, without its cycles.
	gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+realSampledFields+` } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
	s := r.Run.Sampling
	if r.Run.State != "SUCCEEDED" || s == nil || s.ProjectedCycles == nil {
		t.Fatalf("sampled run %s: %s, error %v", r.Run.ID, r.Run.State, r.Run.Error)
	}
	if len(r.Run.Kernels) != launches || r.Run.Progress.KernelsDone != s.Representatives || s.Representatives != p.PlanSampling.Samples {
		t.Fatalf("%d kernels of %d launches, progress %+v, %d representatives of %d planned",
			len(r.Run.Kernels), launches, r.Run.Progress, s.Representatives, p.PlanSampling.Samples)
	}
	simulated, sum := 0, 0.0
	for _, k := range r.Run.Kernels {
		if k.Simulated == nil || k.SimCycles <= 0 || k.FullCycles == nil {
			t.Fatalf("kernel %d: %+v", k.KernelID, k)
		}
		if *k.Simulated {
			simulated++
		} else if k.ProjectedFrom == nil {
			t.Fatalf("kernel %d is projected from no launch", k.KernelID)
		}
		sum += float64(k.SimCycles)
	}
	if simulated != s.Representatives || math.Abs(sum-*s.ProjectedCycles) > float64(launches) {
		t.Fatalf("%d simulated kernels for %d representatives; kernels sum to %.0f, the projection is %.0f", simulated, s.Representatives, sum, *s.ProjectedCycles)
	}
	c := s.Check
	full := 0.0
	for _, k := range r.Run.Kernels {
		full += float64(*k.FullCycles)
	}
	wantErr := 100 * (*s.ProjectedCycles - c.FullCycles) / c.FullCycles
	if c.FullRun.State != "SUCCEEDED" || c.KernelsCompared != launches || math.Abs(full-c.FullCycles) > 0.5 ||
		math.Abs(c.TotalErrorPct-wantErr) > 1e-6 || c.LaunchLatencyCycles == nil || *c.LaunchLatencyCycles != 5000 {
		t.Fatalf("check %+v: want the full run's %.0f cycles over %d launches, error %.4f %%, latency 5000", *c, full, launches, wantErr)
	}
	if !c.InsideInterval || c.FullCycles < *s.CiLowCycles || c.FullCycles > *s.CiHighCycles {
		t.Errorf("the full run's %.0f cycles are outside the stated interval [%.0f, %.0f]", c.FullCycles, *s.CiLowCycles, *s.CiHighCycles)
	}
	if s.SimulatorSeconds <= 0 || s.FullRunSecondsEstimate == nil {
		t.Errorf("simulator seconds %v, full-run estimate %v", s.SimulatorSeconds, s.FullRunSecondsEstimate)
	}
	for _, seg := range s.Segments {
		t.Logf("segment of kernels %v: %q", seg.KernelIds, seg.History)
	}
	t.Logf("%d launches, %d representatives: projected %.0f cycles [%.0f, %.0f], full %.0f: %+.2f %% (%+.2f %% beyond the launch latency), kernel MAPE %.2f %%",
		launches, s.Representatives, *s.ProjectedCycles, *s.CiLowCycles, *s.CiHighCycles, c.FullCycles, c.TotalErrorPct, *c.BeyondLatencyErrorPct, c.KernelMape)
}
