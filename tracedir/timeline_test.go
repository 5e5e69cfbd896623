package tracedir_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

const timelineJSON = `{"steps": [
	{"step": 0, "start_ns": 1733150000000000001, "end_ns": 1733150000000010001, "events": [
		{"name": "_Z7kernel1Pf", "start_ns": 1733150000000000100, "duration_ns": 2000, "kind": "kernel"},
		{"name": "_Z7kernel2Pf", "start_ns": 1733150000000002200, "duration_ns": 3000, "kind": "kernel"},
		{"name": "memcpy HtoD", "start_ns": 1733150000000005300, "duration_ns": 1000, "kind": "memcpy"},
		{"name": "broken", "kind": "kernel"}
	]},
	{"step": 1, "start_ns": 0, "end_ns": 5000, "events": [
		{"name": "_Z7kernel3Pf", "start_ns": 0, "duration_ns": 4000, "kind": "kernel"},
		{"name": "_Z7kernel1Pf", "start_ns": 4000, "duration_ns": 500, "kind": "kernel"}
	]},
	{"step": 2, "start_ns": 10, "end_ns": 5},
	{"step": 0, "start_ns": 0, "end_ns": 1},
	{"step": 3, "start_ns": 0},
	{"step": 4, "start_ns": "0", "end_ns": 1},
	"step 5",
	{"step": 6, "start_ns": 0.5, "end_ns": 2.25}
]}`

const mappingJSON = `[
	{"step": 0, "event": 0, "kernel_id": 1, "context": "0xAAA"},
	{"step": 0, "event": 1, "kernel_id": 2, "context": "0xaaa"},
	{"step": 1, "event": 0, "kernel_id": 3},
	{"step": 7, "event": 0, "kernel_id": 1},
	{"step": 0, "event": 9, "kernel_id": 1},
	{"step": 0, "event": 3, "kernel_id": 1},
	{"step": 0, "event": 0, "kernel_id": 1, "context": "0xaaa"},
	{"step": 1, "event": 1, "kernel_id": 1},
	{"step": 1, "kernel_id": 1},
	{"step": 1, "event": 1, "kernel_id": "1"}
]`

func TestParseTimeline(t *testing.T) {
	tl, err := tracedir.ParseTimeline([]byte(timelineJSON))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, s := range tl.Steps {
		steps = append(steps, s.Step)
	}
	if !slices.Equal(steps, []int{0, 1, 6}) {
		t.Errorf("steps = %v", steps)
	}
	// 1733150000000010001 - 1733150000000000001 is exactly 10000, though
	// neither timestamp fits a float64 exactly.
	if tl.Steps[0].MeasuredNs != 10000 || tl.Steps[2].MeasuredNs != 1.75 {
		t.Errorf("measured = %v, %v", tl.Steps[0].MeasuredNs, tl.Steps[2].MeasuredNs)
	}
	if len(tl.Steps[0].Events) != 4 || tl.Steps[0].Events[3].Bad != "duration_ns: missing" || tl.Steps[0].Events[2].Kind != "memcpy" {
		t.Errorf("events = %+v", tl.Steps[0].Events)
	}
	var bad []string
	for _, b := range tl.Bad {
		bad = append(bad, b.String())
	}
	want := []string{
		"steps[0].events[3]: duration_ns: missing",
		"steps[2]: end_ns is before start_ns",
		"steps[3]: step 0: listed twice",
		"steps[4]: start_ns and end_ns are required",
		"steps[5]: start_ns: want a number, got a string",
		"steps[6]: want an object",
	}
	if !slices.Equal(bad, want) {
		t.Errorf("bad =\n%s\nwant\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}

	for _, doc := range []string{`[]`, `{"steps": []}`} {
		if tl, err := tracedir.ParseTimeline([]byte(doc)); err != nil || len(tl.Steps) != 0 {
			t.Errorf("%s: %+v, %v", doc, tl, err)
		}
	}
	if _, err := tracedir.ParseTimeline([]byte(`{"timeline": []}`)); err == nil {
		t.Error("object without steps: no error")
	}
}

func TestParseKernelMapping(t *testing.T) {
	m, err := tracedir.ParseKernelMapping([]byte(mappingJSON))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, b := range m.Bad {
		bad = append(bad, b.String())
	}
	if !slices.Equal(bad, []string{"[8]: event: missing", "[9]: kernel_id: want an integer, got a string"}) {
		t.Errorf("bad = %q", bad)
	}
	if len(m.Entries) != 8 {
		t.Fatalf("%d entries, want 8", len(m.Entries))
	}
	want := tracedir.EventMapping{Step: 0, Event: 0, Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}} // context normalized
	if m.Entries[0] != want || m.Entries[2].Kernel != (kernellist.Ref{ID: 3}) {
		t.Errorf("entries = %+v", m.Entries)
	}
	if _, err := tracedir.ParseKernelMapping([]byte(`{"steps": []}`)); err == nil {
		t.Error("object without mappings: no error")
	}
}

func TestReadStepFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "corrected_timeline.json"), []byte(timelineJSON), 0o644)
	os.WriteFile(filepath.Join(dir, "kernel_mapping.json"), []byte(`{"mappings": [{"step": 0, "event": 0, "kernel_id": 1}]}`), 0o644)
	if tl, err := tracedir.ReadTimeline(filepath.Join(dir, "corrected_timeline.json")); err != nil || len(tl.Steps) != 3 {
		t.Errorf("ReadTimeline: %v", err)
	}
	if m, err := tracedir.ReadKernelMapping(filepath.Join(dir, "kernel_mapping.json")); err != nil || len(m.Entries) != 1 {
		t.Errorf("ReadKernelMapping: %+v, %v", m, err)
	}
	if _, err := tracedir.ReadKernelMapping(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}
