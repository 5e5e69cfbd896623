package runs

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// Timeline is a parsed corrected_timeline.json: the measured model steps.
type Timeline struct {
	Steps []Step
	Bad   []BadEntry
}

// Step is one measured model step.
type Step struct {
	Step       int
	StartNs    float64
	EndNs      float64
	MeasuredNs float64 // EndNs - StartNs, computed exactly from integer timestamps
	Events     []Event // every event of the file, bad ones included, so indexes hold
}

// Event is one event of a step's timeline.
type Event struct {
	Name       string
	Kind       string
	StartNs    float64
	DurationNs float64
	Bad        string // why the event is unusable; "" when it is fine
}

// KernelMapping is a parsed kernel_mapping.json.
type KernelMapping struct {
	Entries []EventMapping
	Bad     []BadEntry
}

// EventMapping says that event Event (0-based index into the step's
// events) of step Step ran traced kernel Kernel.
type EventMapping struct {
	Step   int
	Event  int
	Kernel kernellist.Ref
}

// StepProjection is a step's measured time and its time with the mapped
// kernels' measured durations replaced by their simulated times.
type StepProjection struct {
	Step           int
	MeasuredNs     float64
	ProjectedNs    float64
	EventsReplaced int // mapped events that had a simulated kernel
}

// ReadTimeline reads and parses corrected_timeline.json.
func ReadTimeline(path string) (Timeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Timeline{}, fmt.Errorf("read timeline: %w", err)
	}
	tl, err := ParseTimeline(data)
	if err != nil {
		return Timeline{}, fmt.Errorf("%s: %w", path, err)
	}
	return tl, nil
}

// ParseTimeline parses corrected_timeline.json (formats.md §7):
// {"steps": [{"step", "start_ns", "end_ns", "events": [{"name", "start_ns",
// "duration_ns", "kind"}]}]}; a bare list of steps is taken too. A step
// needs integer "step" (its index when absent), numeric start_ns and
// end_ns with end_ns >= start_ns, and a step number not seen before; an
// event needs a duration_ns >= 0. Bad steps are reported and skipped; bad
// events are reported and kept, marked, so that mapping indexes still
// point at the right event.
func ParseTimeline(data []byte) (Timeline, error) {
	steps, prefix, err := topList(data, "steps")
	if err != nil {
		return Timeline{}, err
	}
	if prefix == "" {
		prefix = "steps"
	}
	var tl Timeline
	seen := map[int]bool{}
	for i, raw := range steps {
		path := fmt.Sprintf("%s[%d]", prefix, i)
		bad := func(reason string) { tl.Bad = append(tl.Bad, BadEntry{Index: i, Path: path, Reason: reason}) }
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			bad("want an object")
			continue
		}
		f := fields{obj}
		st := Step{Step: i}
		n, ok, reason := f.int("step")
		if reason != "" {
			bad(reason)
			continue
		}
		if ok {
			st.Step = int(n)
		}
		start, ok1, reason1 := f.number("start_ns")
		end, ok2, reason2 := f.number("end_ns")
		switch {
		case reason1 != "":
			bad(reason1)
			continue
		case reason2 != "":
			bad(reason2)
			continue
		case !ok1 || !ok2:
			bad("start_ns and end_ns are required")
			continue
		case end.sub(start) < 0:
			bad("end_ns is before start_ns")
			continue
		case seen[st.Step]:
			bad(fmt.Sprintf("step %d: listed twice", st.Step))
			continue
		}
		seen[st.Step] = true
		st.StartNs, st.EndNs, st.MeasuredNs = start.f, end.f, end.sub(start)

		var events []json.RawMessage
		if raw, ok := f.raw("events"); ok {
			if err := json.Unmarshal(raw, &events); err != nil {
				bad("events: want a list")
				continue
			}
		}
		for j, raw := range events {
			ev := parseEvent(raw)
			if ev.Bad != "" {
				tl.Bad = append(tl.Bad, BadEntry{Index: i, Path: fmt.Sprintf("%s.events[%d]", path, j), Reason: ev.Bad})
			}
			st.Events = append(st.Events, ev)
		}
		tl.Steps = append(tl.Steps, st)
	}
	return tl, nil
}

func parseEvent(raw json.RawMessage) Event {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Event{Bad: "want an object"}
	}
	f := fields{obj}
	var ev Event
	var reason string
	if ev.Name, _, reason = f.string("name"); reason != "" {
		return Event{Bad: reason}
	}
	if ev.Kind, _, reason = f.string("kind"); reason != "" {
		return Event{Bad: reason}
	}
	start, _, reason := f.number("start_ns")
	if reason != "" {
		return Event{Bad: reason}
	}
	d, ok, reason := f.number("duration_ns")
	switch {
	case reason != "":
		return Event{Bad: reason}
	case !ok:
		return Event{Bad: "duration_ns: missing"}
	case d.f < 0:
		return Event{Bad: "duration_ns: must be >= 0"}
	}
	ev.StartNs, ev.DurationNs = start.f, d.f
	return ev
}

// ReadKernelMapping reads and parses kernel_mapping.json.
func ReadKernelMapping(path string) (KernelMapping, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return KernelMapping{}, fmt.Errorf("read kernel mapping: %w", err)
	}
	m, err := ParseKernelMapping(data)
	if err != nil {
		return KernelMapping{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseKernelMapping parses kernel_mapping.json (formats.md §7): a list of
// {"step", "event", "kernel_id", "context"} (an object with "mappings" is
// taken too). step, event and kernel_id are required integers; context is
// optional. Bad entries are reported and skipped.
func ParseKernelMapping(data []byte) (KernelMapping, error) {
	entries, prefix, err := topList(data, "mappings")
	if err != nil {
		return KernelMapping{}, err
	}
	var m KernelMapping
	for i, raw := range entries {
		e, reason := parseMapping(raw)
		if reason != "" {
			m.Bad = append(m.Bad, BadEntry{Index: i, Path: fmt.Sprintf("%s[%d]", prefix, i), Reason: reason})
			continue
		}
		m.Entries = append(m.Entries, e)
	}
	return m, nil
}

func parseMapping(raw json.RawMessage) (EventMapping, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return EventMapping{}, "want an object"
	}
	f := fields{obj}
	var ints [3]int64
	for i, name := range []string{"step", "event", "kernel_id"} {
		n, ok, reason := f.int(name)
		if reason != "" {
			return EventMapping{}, reason
		}
		if !ok {
			return EventMapping{}, name + ": missing"
		}
		ints[i] = n
	}
	ctx, _, reason := f.string("context")
	if reason != "" {
		return EventMapping{}, reason
	}
	return EventMapping{Step: int(ints[0]), Event: int(ints[1]),
		Kernel: kernellist.Ref{ID: int(ints[2]), Context: kernellist.NormalizeContext(ctx)}}, ""
}

// ProjectSteps projects every step of tl onto the simulated kernel times:
// the step's measured time with each mapped event's measured duration
// replaced by its kernel's simulated time. Events without a simulated
// kernel keep their measured duration, so a run of a kernel subset projects
// only the kernels it simulated. Events are treated as running one after
// another: overlapping kernels on several streams are each replaced in full.
//
// A mapping entry is reported in the returned list and skipped when its
// step or event does not exist, its event is bad, it maps an event already
// mapped, or its kernel has no context and matches simulated kernels in
// several contexts.
func ProjectSteps(tl Timeline, mapping []EventMapping, sim []SimTime) ([]StepProjection, []BadEntry) {
	var bad []BadEntry
	index := map[int]int{} // step number → index in tl.Steps
	for i, st := range tl.Steps {
		index[st.Step] = i
	}
	out := make([]StepProjection, len(tl.Steps))
	for i, st := range tl.Steps {
		out[i] = StepProjection{Step: st.Step, MeasuredNs: st.MeasuredNs, ProjectedNs: st.MeasuredNs}
	}
	mapped := map[[2]int]bool{}
	for i, m := range mapping {
		report := func(format string, a ...any) {
			bad = append(bad, BadEntry{Index: i, Path: fmt.Sprintf("[%d]", i), Reason: fmt.Sprintf(format, a...)})
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
		simNs, n := simTimeOf(sim, m.Kernel)
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
func simTimeOf(sim []SimTime, ref kernellist.Ref) (float64, int) {
	var loose []float64
	for _, s := range sim {
		if s.Kernel.ID != ref.ID {
			continue
		}
		if s.Kernel.Context == ref.Context {
			return s.SimNs, 1
		}
		if s.Kernel.Context == "" || ref.Context == "" {
			loose = append(loose, s.SimNs)
		}
	}
	if len(loose) == 1 {
		return loose[0], 1
	}
	return 0, len(loose)
}
