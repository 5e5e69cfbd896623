package results

import (
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

func TestProjectSteps(t *testing.T) {
	// The timeline and mapping tracedir's tests parse from their JSON.
	tl := tracedir.Timeline{Steps: []tracedir.Step{
		{Step: 0, MeasuredNs: 10000, Events: []tracedir.Event{
			{Name: "_Z7kernel1Pf", DurationNs: 2000}, {Name: "_Z7kernel2Pf", DurationNs: 3000},
			{Name: "memcpy HtoD", DurationNs: 1000}, {Bad: "duration_ns: missing"},
		}},
		{Step: 1, MeasuredNs: 5000, Events: []tracedir.Event{{Name: "_Z7kernel3Pf", DurationNs: 4000}, {Name: "_Z7kernel1Pf", DurationNs: 500}}},
		{Step: 6, MeasuredNs: 1.75},
	}}
	mapping := []tracedir.EventMapping{
		{Step: 0, Event: 0, Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}},
		{Step: 0, Event: 1, Kernel: kernellist.Ref{ID: 2, Context: "0xaaa"}},
		{Step: 1, Event: 0, Kernel: kernellist.Ref{ID: 3}},
		{Step: 7, Event: 0, Kernel: kernellist.Ref{ID: 1}},
		{Step: 0, Event: 9, Kernel: kernellist.Ref{ID: 1}},
		{Step: 0, Event: 3, Kernel: kernellist.Ref{ID: 1}},
		{Step: 0, Event: 0, Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}},
		{Step: 1, Event: 1, Kernel: kernellist.Ref{ID: 1}},
	}
	for i := range mapping {
		mapping[i].Index = i // its place in kernel_mapping.json
	}
	kernels := []cascade.RunKernel{
		simulatedKernel(1, "0xaaa", 1500),
		simulatedKernel(1, "0xbbb", 700),
		simulatedKernel(3, "0xaaa", 100),
	}
	got, bad := ProjectSteps(tl, mapping, kernels)
	// By hand:
	//   step 0: measured 10000; event 0 (2000 ns) → kernel 1@0xaaa, 1500 ns;
	//           event 1 → kernel 2, not simulated, keeps 3000; event 2 unmapped.
	//           10000 - 2000 + 1500 = 9500.
	//   step 1: measured 5000; event 0 (4000 ns) → kernel 3, no context, one
	//           match (3@0xaaa, 100 ns): 5000 - 4000 + 100 = 1100; event 1's
	//           mapping (kernel 1, no context) matches two contexts: skipped.
	//   step 6: no events: 1.75 both.
	want := []cascade.StepProjection{
		{Step: 0, MeasuredNs: 10000, ProjectedNs: 9500, EventsReplaced: 1},
		{Step: 1, MeasuredNs: 5000, ProjectedNs: 1100, EventsReplaced: 1},
		{Step: 6, MeasuredNs: 1.75, ProjectedNs: 1.75},
	}
	if !slices.Equal(got, want) {
		t.Errorf("projections:\n got %+v\nwant %+v", got, want)
	}
	var reasons []string
	for _, b := range bad {
		reasons = append(reasons, b.String())
	}
	wantBad := []string{
		"[3]: step 7: not in the timeline",
		"[4]: step 0 has no event 9",
		"[5]: step 0 event 3 is bad: duration_ns: missing",
		"[6]: step 0 event 0: mapped twice",
		"[7]: kernel 1: no context, and simulated in 2 contexts",
	}
	if !slices.Equal(reasons, wantBad) {
		t.Errorf("bad =\n%s\nwant\n%s", strings.Join(reasons, "\n"), strings.Join(wantBad, "\n"))
	}

	// Without simulated kernels every step keeps its measured time.
	got, _ = ProjectSteps(tl, mapping, nil)
	for _, p := range got {
		if p.ProjectedNs != p.MeasuredNs || p.EventsReplaced != 0 {
			t.Errorf("no sim: %+v", p)
		}
	}
}
