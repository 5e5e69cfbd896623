package runs_test

import (
	"slices"
	"testing"

	"github.com/cascade-sim/cascade/app"
)

// TestSampledRunCutsItsLongestSegment: on two slots, a plan whose one
// range would be a sampled run's wall time alone is simulated in more
// segments than it has ranges (sampling.CutRanges), a later part after a
// warm-up the part before it simulates too. A representative in that
// warm-up has its results from the part that counts it, the earlier
// one: the stand-in gives a kernel the cycles of its place in its
// segment, so the two parts give it different cycles. Each
// representative is counted once, and the run's simulatedLaunches are
// what its segments simulated.
func TestSampledRunCutsItsLongestSegment(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", nil, func(c *app.Config) { c.RunConcurrency = 2 })
	var p struct{ PlanSampling samplingPlan }
	s.MustDo(t, `mutation { planSampling(traceId: "`+sampledID+`", target: {error: 0.05}, warmup: 3) {
		id samples segments { start end firstLaunch lastLaunch representatives } strata { representatives { launch kernelId } } } }`, nil, &p)
	plan := p.PlanSampling
	r := waitSampled(t, s, launchSampled(t, s, plan.ID, false).ID, "SUCCEEDED")
	segs := r.Sampling.Segments
	if len(segs) <= len(plan.Segments) {
		t.Fatalf("%d segments for the plan's %d ranges %+v: none was cut", len(segs), len(plan.Segments), plan.Segments)
	}
	if r.Progress.KernelsDone != plan.Samples || r.Sampling.Representatives != plan.Samples {
		t.Fatalf("progress %+v, %d representatives; want %d", r.Progress, r.Sampling.Representatives, plan.Samples)
	}
	simulated := 0 // the warm-up the parts share counted twice, as simulated
	for _, seg := range segs {
		simulated += len(seg.Kernels)
	}
	if r.Sampling.SimulatedLaunches != simulated {
		t.Errorf("simulatedLaunches %d, the segments simulated %d", r.Sampling.SimulatedLaunches, simulated)
	}
	var reps []int
	for _, st := range plan.Strata {
		for _, rep := range st.Representatives {
			reps = append(reps, rep.KernelID)
		}
	}
	got := map[int]int64{}
	for _, k := range r.KernelPage.Nodes {
		if k.Simulated != nil && *k.Simulated {
			got[k.KernelID] = k.SimCycles
		}
	}
	// The segments by their first kernel: a part before the one cut after it.
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return segs[a].Kernels[0].KernelID - segs[b].Kernels[0].KernelID })
	overlapped := 0
	for _, id := range reps {
		var cycles []int64 // by the segments that simulated it, in order
		for _, i := range order {
			for _, k := range segs[i].Kernels {
				if k.KernelID == id {
					cycles = append(cycles, k.SimCycles)
				}
			}
		}
		if len(cycles) == 0 {
			t.Fatalf("representative %d: simulated by no segment", id)
		}
		if got[id] != cycles[0] {
			t.Errorf("representative %d: the run has %d cycles, the segments %v: want the first's", id, got[id], cycles)
		}
		if len(cycles) > 1 && cycles[0] != cycles[1] {
			overlapped++
		}
	}
	if overlapped == 0 {
		t.Fatalf("no representative was simulated by two parts with different cycles: the test shows nothing (segments %+v)", segs)
	}
}
