package postproc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestCutTraceWarning: a kernel trace cut at a line boundary, fewer
// instruction lines than its stats row's total_reported_insts, is
// post-processed (here in this process, its command's output written to
// the log as `cascade postprocess` writes it) and the trace is ready with
// the warning first among its warnings; the same trace whole is ready
// without it.
func TestCutTraceWarning(t *testing.T) {
	trace, err := os.ReadFile(filepath.Join("..", "accelsim", "posttraces", "testdata", "golden", "classic", "in", "kernel-1.trace"))
	if err != nil {
		t.Fatal(err)
	}
	cut := trace[:bytes.LastIndexByte(trace[:len(trace)-1], '\n')+1] // its last line gone
	stats := statsHeader + "kernel-1.trace, _Z4testPf, 2, 2, 1, 4, 70, 1, 1, 70, 14,14\nkernel-2.trace, _Z4testPf, x\n"
	r := newRig(t)
	p := r.processor(1)
	p.cfg.Format = FormatTracez
	if err := os.MkdirAll(filepath.Join(r.work, "postprocess"), 0o755); err != nil {
		t.Fatal(err)
	}
	const bad = "traces/stats.csv:3: want 12 columns, got 3"
	for id, want := range map[string][]string{
		"cut":   {"kernel-1.trace: 13 instruction lines, stats.csv's total_reported_insts says 14: the file may be cut short; upload it again", bad},
		"whole": {bad},
	} {
		data := trace
		if id == "cut" {
			data = cut
		}
		r.trace(id, cascade.TraceProcessing, map[string]string{
			"traces/kernel-1.trace": string(data), "traces/kernelslist": "kernel-1.trace\n", "traces/stats.csv": stats})
		dir := filepath.Join(r.root, id)
		var w tracedir.Warnings
		if err := Postprocess(context.Background(), filepath.Join(dir, "traces"), Options{Format: FormatTracez, Jobs: 1, WorkDir: t.TempDir(), Warnings: &w}); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		log.WriteString("time=... level=INFO msg=\"processing kernel trace\"\n")
		WriteWarnings(&log, &w)
		if err := os.WriteFile(p.LogPath(id), log.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		p.finish(context.Background(), id, dir, "", true)
		if tr := r.stored(id); tr.State != cascade.TraceReady || !reflect.DeepEqual(tr.Warnings, want) {
			t.Errorf("%s: %s with warnings %q, want READY with %q", id, tr.State, tr.Warnings, want)
		}
	}
}
