package plans_test

import (
	"context"
	"math"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestEstimate: runs of a config that took 2 s to start and simulated a
// million warp instructions a second give that rate and start-up back,
// and a plan's sampled run is its segments' processes, 2 at once; a
// config without runs, or whose runs' traces count no instructions, has
// no estimate.
func TestEstimate(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(900)
	addTrace(t, d, bucket, "timed", ks, rows)
	uncounted := make([]cascade.Kernel, 10)
	copy(uncounted, ks)
	for i := range uncounted {
		uncounted[i].Instructions = nil
	}
	addTrace(t, d, bucket, "uncounted", uncounted, nil)
	s := &plans.Service{Store: d, BucketDir: bucket, Runs: d,
		Concurrency: func() (int, string) { return 2, "two at once" }}
	p, err := s.Plan(ctx, plans.Request{TraceID: "timed"})
	if err != nil {
		t.Fatal(err)
	}
	addRun := func(id, trace, config string, kernels []cascade.Kernel, subset bool) float64 {
		t.Helper()
		var insts int64
		rks := make([]cascade.RunKernel, len(kernels))
		var ids []int
		for i, k := range kernels {
			insts += cascade.Deref(k.Instructions)
			rks[i] = cascade.RunKernel{Seq: i, KernelID: cascade.Ptr(k.KernelID), Context: k.Context, Name: k.Name, TraceFile: k.TraceFile, SimCycles: 1}
			ids = append(ids, k.KernelID)
		}
		wall := 2 + float64(insts)/1e6
		r := cascade.Run{ID: id, TraceID: trace, SimConfig: config, State: cascade.RunSucceeded, Executor: "local",
			Figures: cascade.RunFigures{WallSeconds: wall}}
		if subset {
			r.KernelIDs = ids
		}
		if err := d.CreateRun(ctx, &r); err != nil {
			t.Fatal(err)
		}
		if err := d.SaveRunKernels(ctx, id, rks); err != nil {
			t.Fatal(err)
		}
		return wall
	}
	fullWall := addRun("r-full", "timed", "SM7_QV100", ks, false)
	addRun("r-some", "timed", "SM7_QV100", ks[:30], true)
	addRun("r-few", "timed", "SM7_QV100", ks[100:103], true)
	addRun("r-uncounted", "uncounted", "SM6_TITANX", uncounted, false)

	e, err := s.Estimate(ctx, p.ID, "SM7_QV100")
	if err != nil || e == nil {
		t.Fatalf("estimate: %+v, %v", e, err)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	segs := len(sampling.Ranges(planWithStrata(t, s, p)))
	if e.StartupSeconds == nil || e.Runs != 3 || !close(e.InstructionsPerSecond, 1e6) || !close(*e.StartupSeconds, 2) {
		t.Errorf("rate: %+v, want 1e6 a second and 2 s of start-up from 3 runs", e)
	}
	if e.Config != "SM7_QV100" || e.Segments != segs || e.Concurrency != min(2, segs) || e.ConcurrencyNote != "two at once" {
		t.Errorf("segments: %d at once of %d (%q), want 2 of %d", e.Concurrency, e.Segments, e.ConcurrencyNote, segs)
	}
	if want := 2*float64(segs) + float64(p.SimulatedInstructions)/1e6; !close(e.ProcessSeconds, want) {
		t.Errorf("process seconds %g, want %g (2 s a segment and the plan's %d instructions)", e.ProcessSeconds, want, p.SimulatedInstructions)
	}
	if !(e.Seconds >= e.ProcessSeconds/2 && e.Seconds <= e.ProcessSeconds) {
		t.Errorf("wall %g s: not between half and all of %g s of processes on 2 slots", e.Seconds, e.ProcessSeconds)
	}
	if want := 2 + float64(p.Instructions)/1e6; !close(e.FullSeconds, want) || e.MeasuredFullSeconds == nil || *e.MeasuredFullSeconds != fullWall {
		t.Errorf("full run: %g s estimated, %v measured; want %g and %g", e.FullSeconds, e.MeasuredFullSeconds, want, fullWall)
	}
	if e.Speedup() <= 1 {
		t.Errorf("speedup %g: the sampled run is no faster", e.Speedup())
	}
	for _, config := range []string{"SM6_TITANX", "SM90_H100"} {
		if e, err := s.Estimate(ctx, p.ID, config); err != nil || e != nil {
			t.Errorf("%s: %+v, %v; want no estimate", config, e, err)
		}
	}
	if _, err := s.Estimate(ctx, "p-none", "SM7_QV100"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Errorf("an unknown plan: %v", err)
	}
}

// planWithStrata is p with its stored strata.
func planWithStrata(t *testing.T, s *plans.Service, p cascade.SamplingPlan) cascade.SamplingPlan {
	t.Helper()
	var err error
	if p.Strata, err = s.SamplingStrata(context.Background(), p.ID); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeConfigs knows SM7_QV100, and SM6_BROKEN, which cannot be used.
type fakeConfigs struct{}

func (fakeConfigs) Variant(_ context.Context, name string, _ []cascade.SimParam) (cascade.SimConfig, error) {
	switch name {
	case "SM7_QV100":
		return cascade.SimConfig{Name: name}, nil
	case "SM6_BROKEN":
		return cascade.SimConfig{}, cascade.Errorf(cascade.EINVALID, "simConfig: SM6_BROKEN cannot be used: no trace.config")
	}
	return cascade.SimConfig{}, cascade.Errorf(cascade.EINVALID, "simConfig: no config %q (have SM6_BROKEN, SM7_QV100)", name)
}

// TestEstimateConfig: a config that is not one, or cannot be used, is
// refused naming config, with the reason; it was estimated as a config
// without runs (null, as "no measured run").
func TestEstimateConfig(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(90)
	addTrace(t, d, bucket, "timed", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket, Runs: d, Configs: fakeConfigs{}}
	p, err := s.Plan(ctx, plans.Request{TraceID: "timed"})
	if err != nil {
		t.Fatal(err)
	}
	for config, want := range map[string]string{
		"NOPE":       `config: no config "NOPE" (have SM6_BROKEN, SM7_QV100)`,
		"SM6_BROKEN": "config: SM6_BROKEN cannot be used: no trace.config",
	} {
		e, err := s.Estimate(ctx, p.ID, config)
		if cascade.ErrorCode(err) != cascade.EINVALID || cascade.ErrorMessage(err) != want {
			t.Errorf("Estimate(%s) = %+v, %v; want BAD_USER_INPUT %q", config, e, err, want)
		}
	}
	if e, err := s.Estimate(ctx, p.ID, "SM7_QV100"); err != nil || e != nil {
		t.Errorf("a config without runs: %+v, %v; want no estimate", e, err)
	}
}
