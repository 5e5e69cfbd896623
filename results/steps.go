package results

import (
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// ProjectSteps projects every step of tl onto a run's simulated kernel
// times (the SimTimeNs of the kernels [simulated] takes): the step's
// measured time with each mapped event's measured duration replaced by its
// kernel's simulated time. Events without a simulated
// kernel keep their measured duration, so a run of a kernel subset projects
// only the kernels it simulated. Events are treated as running one after
// another: overlapping kernels on several streams are each replaced in full.
//
// A mapping entry is reported in the returned list and skipped when its
// step or event does not exist, its event is bad, it maps an event already
// mapped, or its kernel has no context and matches simulated kernels in
// several contexts.
func ProjectSteps(tl tracedir.Timeline, mapping []tracedir.EventMapping, kernels []cascade.RunKernel) ([]cascade.StepProjection, []tracedir.BadEntry) {
	var bad []tracedir.BadEntry
	index := map[int]int{} // step number → index in tl.Steps
	for i, st := range tl.Steps {
		index[st.Step] = i
	}
	out := make([]cascade.StepProjection, len(tl.Steps))
	for i, st := range tl.Steps {
		out[i] = cascade.StepProjection{Step: st.Step, MeasuredNs: st.MeasuredNs, ProjectedNs: st.MeasuredNs}
	}
	mapped := map[[2]int]bool{}
	for i, m := range mapping {
		report := func(format string, a ...any) {
			bad = append(bad, tracedir.BadEntry{Index: i, Path: fmt.Sprintf("[%d]", i), Reason: fmt.Sprintf(format, a...)})
		}
		si, ok := index[m.Step]
		if !ok {
			report("step %d: not in the timeline", m.Step)
			continue
		}
		st := tl.Steps[si]
		if m.Event < 0 || m.Event >= len(st.Events) {
			report("step %d has no event %d", m.Step, m.Event)
			continue
		}
		if ev := st.Events[m.Event]; ev.Bad != "" {
			report("step %d event %d is bad: %s", m.Step, m.Event, ev.Bad)
			continue
		}
		key := [2]int{m.Step, m.Event}
		if mapped[key] {
			report("step %d event %d: mapped twice", m.Step, m.Event)
			continue
		}
		mapped[key] = true
		simNs, n := simTimeOf(kernels, m.Kernel)
		switch {
		case n > 1:
			report("kernel %s: no context, and simulated in %d contexts", m.Kernel, n)
			continue
		case n == 0:
			continue // not simulated: the measured duration stays
		}
		out[si].ProjectedNs += simNs - st.Events[m.Event].DurationNs
		out[si].EventsReplaced++
	}
	return out, bad
}

// simTimeOf finds ref's simulated time, and how many simulated kernels
// matched: an exact match wins; a side without a context matches any
// context.
func simTimeOf(kernels []cascade.RunKernel, ref kernellist.Ref) (float64, int) {
	var loose []float64
	for _, k := range kernels {
		sref, simNs, ok := simulated(k)
		if !ok || sref.ID != ref.ID {
			continue
		}
		if sref.Context == ref.Context {
			return simNs, 1
		}
		if sref.Context == "" || ref.Context == "" {
			loose = append(loose, simNs)
		}
	}
	if len(loose) == 1 {
		return loose[0], 1
	}
	return 0, len(loose)
}
