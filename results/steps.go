package results

import (
	"fmt"
	"slices"

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
// several contexts, or its event's kind is not "kernel" (a memcpy).
// Simulated kernels are indexed first: its time is linear in mappings
// and kernels.
func ProjectSteps(tl tracedir.Timeline, mapping []tracedir.EventMapping, kernels []cascade.RunKernel) ([]cascade.StepProjection, []tracedir.BadEntry) {
	return projectSteps(tl, mapping, kernels, nil)
}

// projectSteps is ProjectSteps, also reporting and skipping mappings to a
// kernel the trace's kernel list tk does not have (nil: not known).
func projectSteps(tl tracedir.Timeline, mapping []tracedir.EventMapping, kernels []cascade.RunKernel, tk traceKernels) ([]cascade.StepProjection, []tracedir.BadEntry) {
	var bad []tracedir.BadEntry
	sims := indexSimulated(kernels)
	index := map[int]int{} // step number → index in tl.Steps
	for i, st := range tl.Steps {
		index[st.Step] = i
	}
	out := make([]cascade.StepProjection, len(tl.Steps))
	for i, st := range tl.Steps {
		out[i] = cascade.StepProjection{Step: st.Step, MeasuredNs: st.MeasuredNs, ProjectedNs: st.MeasuredNs}
	}
	mapped := map[[2]int]bool{}
	for _, m := range mapping {
		report := func(format string, a ...any) {
			bad = append(bad, tracedir.BadEntry{Index: m.Index, Path: fmt.Sprintf("[%d]", m.Index), Reason: fmt.Sprintf(format, a...)})
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
		} else if ev.Kind != "" && ev.Kind != "kernel" {
			report("step %d event %d is a %q event, not a kernel; its measured duration stays", m.Step, m.Event, ev.Kind)
			continue
		}
		if tk != nil {
			ctxs, ok := tk[m.Kernel.ID]
			if !ok || m.Kernel.Context != "" && !slices.Contains(ctxs, m.Kernel.Context) && !slices.Contains(ctxs, "") {
				report("kernel %s: not in the trace; skipped", m.Kernel)
				continue
			}
		}
		key := [2]int{m.Step, m.Event}
		if mapped[key] {
			report("step %d event %d: mapped twice", m.Step, m.Event)
			continue
		}
		mapped[key] = true
		simNs, n := sims.timeOf(m.Kernel)
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

// simulatedIndex is a run's simulated kernel times by kernel.
type simulatedIndex struct {
	exact map[kernellist.Ref]float64 // the first kernel of each (id, context)
	byID  map[int][]kernellist.Ref   // each id's kernels, in run order
	times map[int][]float64          // and their times
}

func indexSimulated(kernels []cascade.RunKernel) simulatedIndex {
	x := simulatedIndex{exact: map[kernellist.Ref]float64{}, byID: map[int][]kernellist.Ref{}, times: map[int][]float64{}}
	for _, k := range kernels {
		ref, simNs, ok := simulated(k)
		if !ok {
			continue
		}
		if _, seen := x.exact[ref]; !seen {
			x.exact[ref] = simNs
		}
		x.byID[ref.ID] = append(x.byID[ref.ID], ref)
		x.times[ref.ID] = append(x.times[ref.ID], simNs)
	}
	return x
}

// timeOf finds ref's simulated time, and how many simulated kernels
// matched: an exact match wins; a side without a context matches any
// context.
func (x simulatedIndex) timeOf(ref kernellist.Ref) (float64, int) {
	if ns, ok := x.exact[ref]; ok {
		return ns, 1
	}
	var loose []float64
	for i, sref := range x.byID[ref.ID] {
		if sref.Context == "" || ref.Context == "" {
			loose = append(loose, x.times[ref.ID][i])
		}
	}
	if len(loose) == 1 {
		return loose[0], 1
	}
	return 0, len(loose)
}
