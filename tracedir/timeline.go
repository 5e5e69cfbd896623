package tracedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// Step-timeline files; a trace has a step timeline when it holds both.
const (
	TimelineFile      = "corrected_timeline.json"
	KernelMappingFile = "kernel_mapping.json"
)

// HasStepTimeline reports whether the trace holds both step-timeline files.
func (t *Tree) HasStepTimeline() bool { return t.Has(TimelineFile) && t.Has(KernelMappingFile) }

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
	Index  int // the entry's index in the file's list
	Step   int
	Event  int
	Kernel kernellist.Ref
}

// ReadTimeline reads and parses corrected_timeline.json.
// It is read as a stream, a step at a time: only what is kept of each
// step (its times and its events') is in memory, not the file.
func ReadTimeline(path string) (Timeline, error) {
	return readTimingFile(path, "timeline", scanTimeline)
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
	return scanTimeline(bytes.NewReader(data))
}

func scanTimeline(r io.ReadSeeker) (Timeline, error) {
	var tl Timeline
	seen := map[int]bool{}
	// Paths are named once the stream says where the list sits.
	_, err := streamList(r, "steps", func(i int, _ int64, raw json.RawMessage) bool {
		tl.parseStep(i, raw, seen)
		return true
	})
	if err != nil {
		return Timeline{}, err
	}
	for i := range tl.Bad {
		tl.Bad[i].Path = "steps" + tl.Bad[i].Path
	}
	return tl, nil
}

// parseStep parses step i of the timeline, adding it or why it is bad.
func (tl *Timeline) parseStep(i int, raw json.RawMessage, seen map[int]bool) {
	path := fmt.Sprintf("[%d]", i)
	bad := func(reason string) { tl.Bad = append(tl.Bad, BadEntry{Index: i, Path: path, Reason: reason}) }
	for range 1 {
		f, ok := jsonObject(raw)
		if !ok {
			bad("want an object")
			continue
		}
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
		case math.IsInf(end.sub(start), 0):
			bad("end_ns - start_ns is too large")
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
}

func parseEvent(raw json.RawMessage) Event {
	f, ok := jsonObject(raw)
	if !ok {
		return Event{Bad: "want an object"}
	}
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
	return readTimingFile(path, "kernel mapping", scanKernelMapping)
}

// ParseKernelMapping parses kernel_mapping.json (formats.md §7): a list of
// {"step", "event", "kernel_id", "context"} (an object with "mappings" is
// taken too). step, event and kernel_id are required integers; context is
// optional. Bad entries are reported and skipped.
func ParseKernelMapping(data []byte) (KernelMapping, error) {
	return scanKernelMapping(bytes.NewReader(data))
}

func scanKernelMapping(r io.ReadSeeker) (KernelMapping, error) {
	var m KernelMapping
	prefix, err := streamList(r, "mappings", func(i int, _ int64, raw json.RawMessage) bool {
		e, reason := parseMapping(raw)
		e.Index = i
		if reason != "" {
			m.Bad = append(m.Bad, BadEntry{Index: i, Path: fmt.Sprintf("[%d]", i), Reason: reason})
			return true
		}
		m.Entries = append(m.Entries, e)
		return true
	})
	if err != nil {
		return KernelMapping{}, err
	}
	for i := range m.Bad {
		m.Bad[i].Path = prefix + m.Bad[i].Path
	}
	return m, nil
}

func parseMapping(raw json.RawMessage) (EventMapping, string) {
	f, ok := jsonObject(raw)
	if !ok {
		return EventMapping{}, "want an object"
	}
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
