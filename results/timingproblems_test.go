package results_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/results"
)

// timingTrace is a ready trace "t" of kernels 1@0xa, 1@0xb and 2@0xa with
// the given timing files, and a run of it simulating each at 1 GHz
// (1000, 2000 and 3000 cycles).
func timingTrace(t *testing.T, files map[string]string) (*results.Reader, cascade.Run, cascade.Trace) {
	t.Helper()
	bucket := t.TempDir()
	dir := filepath.Join(bucket, "t")
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, hasRT := files["real_timing.json"]
	_, hasTL := files["corrected_timeline.json"]
	tr := cascade.Trace{ID: "t", State: cascade.TraceReady, HasRealTiming: hasRT, HasStepTimeline: hasTL, UpdatedAt: time.Unix(1, 0)}
	run := cascade.Run{ID: "r", TraceID: "t", State: cascade.RunSucceeded, Figures: cascade.RunFigures{CoreClockMHz: 1000}, UpdatedAt: time.Unix(2, 0)}
	var tks []cascade.Kernel
	var rks []cascade.RunKernel
	for i, k := range []struct {
		id     int
		ctx    string
		cycles int64
	}{{1, "0xa", 1000}, {1, "0xb", 2000}, {2, "0xa", 3000}} {
		tks = append(tks, cascade.Kernel{TraceID: "t", Seq: i, KernelID: k.id, Context: cascade.Ptr(k.ctx)})
		rks = append(rks, cascade.RunKernel{RunID: "r", Seq: i, KernelID: cascade.Ptr(k.id), Context: cascade.Ptr(k.ctx), SimCycles: k.cycles})
	}
	s := &memStore{traces: map[string]cascade.Trace{"t": tr}, runs: []cascade.Run{run},
		kernels: map[string][]cascade.RunKernel{"r": rks}, traceKernels: map[string][]cascade.Kernel{"t": tks}}
	return results.New(results.Config{Store: s, BucketDir: bucket}), run, tr
}

func wantProblems(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("no problem says %q; problems:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestCyclesOnlyRealTiming: rows with cycles and no duration_ns are
// compared, at the run's core clock (simulated against measured cycles),
// and measuredTimesFrom says so; rows with no time, or a field the format
// does not have, are named with their file and row.
func TestCyclesOnlyRealTiming(t *testing.T) {
	m, run, tr := timingTrace(t, map[string]string{"real_timing.json": `[
		{"kernel_id": 1, "context": "0xa", "cycles": 800},
		{"kernel_id": 2, "context": "0xa", "duration_us": 3.1}
	]`})
	res, err := m.Read(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	// 1@0xa: simulated 1000 cycles = 1000 ns; measured 800 cycles = 800 ns: +25 %.
	if res.Comparison == nil || res.Comparison.KernelsCompared != 1 || res.Comparison.MAPE != 25 {
		t.Errorf("comparison = %+v", res.Comparison)
	}
	wantProblems(t, res.Problems,
		"real_timing.json: [1]: duration_us: not a field of a real-timing row",
		"real_timing.json: [1]: kernel 2: no duration_ns or cycles: nothing to compare; skipped")
	if from := m.MeasuredTimesFrom(tr); from == nil || !strings.HasPrefix(*from, "real_timing.json: cycles") {
		t.Errorf("measuredTimesFrom = %v", cascade.Deref(from))
	}

	m, run, tr = timingTrace(t, map[string]string{"real_timing.json": `[{"kernel_id": 1, "duration_us": 3.1}]`})
	res, _ = m.Read(context.Background(), run)
	if res.Comparison != nil {
		t.Errorf("comparison = %+v", res.Comparison)
	}
	wantProblems(t, res.Problems, "real_timing.json: no row has duration_ns or cycles: no kernel is compared")
	if from := m.MeasuredTimesFrom(tr); from != nil {
		t.Errorf("measuredTimesFrom = %q, from rows without a time", *from)
	}
}

// TestRealTimingRowsNotUsedAreReported: every row left out or merged is
// named, with its file and index.
func TestRealTimingRowsNotUsedAreReported(t *testing.T) {
	m, run, _ := timingTrace(t, map[string]string{"real_timing.json": `{"rows": [
		{"kernel_id": 1, "context": "0xdead", "duration_ns": 10},
		{"kernel_id": 9, "context": "0xa", "duration_ns": 10},
		{"kernel_id": 2, "context": "0xa", "duration_ns": null},
		{"kernel_id": 2, "context": "0xa", "duration_ns": 3100},
		{"kernel_id": 2, "context": "0xa", "duration_ns": 5000},
		{"kernel_id": 2, "duration_ns": 9800},
		{"kernel_id": 1, "duration_ns": 700},
		{"kernel_id": 1, "context": "0xb", "duration_ns": 1000, "invocation": 0},
		{"kernel_id": 1, "context": "0xb", "duration_ns": 3000, "invocation": 1}
	]}`})
	res, err := m.Read(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, res.Problems,
		"real_timing.json: rows[0]: kernel 1: context 0xdead is not one of the trace's (0xa, 0xb); ignored",
		"real_timing.json: rows[1]: kernel 9@0xa: not in the trace; ignored",
		"real_timing.json: rows[2]: kernel 2: no duration_ns or cycles (duration_ns null)",
		"real_timing.json: rows[3] and rows[4]: kernel 2@0xa: 2 rows without distinct invocations; their mean is used",
		"real_timing.json: rows[5]: kernel 2: no context, while rows[3] names its context 0xa",
		"real_timing.json: rows[6]: kernel 1: no context, and the trace has it in 2 contexts; ignored")
	for _, p := range res.Problems {
		if strings.Contains(p, "rows[7]") || strings.Contains(p, "rows[8]") {
			t.Errorf("distinct invocations reported: %s", p)
		}
	}
	if res.Comparison == nil || res.Comparison.KernelsCompared != 2 {
		t.Errorf("comparison = %+v", res.Comparison)
	}
}

// TestStepTimingProblemsNameTheirFile: mapping problems name
// kernel_mapping.json, parse errors the file's path in the trace, and a
// mapping to a kernel the trace lacks or to a memcpy is reported.
func TestStepTimingProblemsNameTheirFile(t *testing.T) {
	m, run, _ := timingTrace(t, map[string]string{
		"corrected_timeline.json": `{"steps": [{"step": 0, "start_ns": 0, "end_ns": 10000, "events": [
			{"name": "k1", "duration_ns": 2000, "kind": "kernel"},
			{"name": "memcpy HtoD", "duration_ns": 1000, "kind": "memcpy"},
			{"name": "k9", "duration_ns": 1000, "kind": "kernel"}]}]}`,
		"kernel_mapping.json": `[
			{"step": 0, "event": 0, "kernel_id": 1, "context": "0xa"},
			{"step": 0, "event": 1, "kernel_id": 2, "context": "0xa"},
			{"step": 0, "event": 2, "kernel_id": 9, "context": "0xa"},
			{"step": 5, "event": 0, "kernel_id": 1, "context": "0xa"}]`,
	})
	res, err := m.Read(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, res.Problems,
		`kernel_mapping.json: [1]: step 0 event 1 is a "memcpy" event, not a kernel`,
		"kernel_mapping.json: [2]: kernel 9@0xa: not in the trace; skipped",
		"kernel_mapping.json: [3]: step 5: not in the timeline")
	if len(res.Steps) != 1 || res.Steps[0].ProjectedNs != 9000 {
		t.Errorf("steps = %+v", res.Steps)
	}

	m, run, _ = timingTrace(t, map[string]string{
		"corrected_timeline.json": "{\"steps\": [\n\n{\"step\": x}]}",
		"kernel_mapping.json":     `[]`,
	})
	res, _ = m.Read(context.Background(), run)
	wantProblems(t, res.Problems, "corrected_timeline.json: not JSON: line 3")
	for _, p := range res.Problems {
		if strings.Contains(p, string(filepath.Separator)+"t"+string(filepath.Separator)) {
			t.Errorf("a problem names the server's path: %s", p)
		}
	}
}
