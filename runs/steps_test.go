package runs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
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
	tl, err := ParseTimeline([]byte(timelineJSON))
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
		if tl, err := ParseTimeline([]byte(doc)); err != nil || len(tl.Steps) != 0 {
			t.Errorf("%s: %+v, %v", doc, tl, err)
		}
	}
	if _, err := ParseTimeline([]byte(`{"timeline": []}`)); err == nil {
		t.Error("object without steps: no error")
	}
}

func TestProjectSteps(t *testing.T) {
	tl, err := ParseTimeline([]byte(timelineJSON))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseKernelMapping([]byte(mappingJSON))
	if err != nil {
		t.Fatal(err)
	}
	var mbad []string
	for _, b := range m.Bad {
		mbad = append(mbad, b.String())
	}
	if !slices.Equal(mbad, []string{"[8]: event: missing", "[9]: kernel_id: want an integer, got a string"}) {
		t.Errorf("mapping bad = %q", mbad)
	}
	sim := []SimTime{
		{Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}, SimNs: 1500},
		{Kernel: kernellist.Ref{ID: 1, Context: "0xbbb"}, SimNs: 700},
		{Kernel: kernellist.Ref{ID: 3, Context: "0xaaa"}, SimNs: 100},
	}
	got, bad := ProjectSteps(tl, m.Entries, sim)
	// By hand:
	//   step 0: measured 10000; event 0 (2000 ns) → kernel 1@0xaaa, 1500 ns;
	//           event 1 → kernel 2, not simulated, keeps 3000; event 2 unmapped.
	//           10000 - 2000 + 1500 = 9500.
	//   step 1: measured 5000; event 0 (4000 ns) → kernel 3, no context, one
	//           match (3@0xaaa, 100 ns): 5000 - 4000 + 100 = 1100; event 1's
	//           mapping (kernel 1, no context) matches two contexts: skipped.
	//   step 6: no events: 1.75 both.
	want := []StepProjection{
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
	got, _ = ProjectSteps(tl, m.Entries, nil)
	for _, p := range got {
		if p.ProjectedNs != p.MeasuredNs || p.EventsReplaced != 0 {
			t.Errorf("no sim: %+v", p)
		}
	}
}

func TestReadStepFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "corrected_timeline.json"), []byte(timelineJSON), 0o644)
	os.WriteFile(filepath.Join(dir, "kernel_mapping.json"), []byte(`{"mappings": [{"step": 0, "event": 0, "kernel_id": 1}]}`), 0o644)
	if tl, err := ReadTimeline(filepath.Join(dir, "corrected_timeline.json")); err != nil || len(tl.Steps) != 3 {
		t.Errorf("ReadTimeline: %v", err)
	}
	if m, err := ReadKernelMapping(filepath.Join(dir, "kernel_mapping.json")); err != nil || len(m.Entries) != 1 {
		t.Errorf("ReadKernelMapping: %+v, %v", m, err)
	}
	if _, err := ReadKernelMapping(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}
