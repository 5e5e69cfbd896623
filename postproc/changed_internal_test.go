package postproc

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracedir"
)

// processedTraces writes post-processed traces of ids, and returns the
// sums their uploads are complete with. A trace whose id ends in "-big"
// has more kernels than finishBatch takes, and is finished on its own
// (finish); the others with others (finishBatch).
func processedTraces(t *testing.T, r *rig, ids ...string) map[string]string {
	t.Helper()
	var big strings.Builder
	big.WriteString(statsHeader)
	for big.Len() <= smallStatsBytes {
		big.WriteString(statsRow(1))
	}
	sums := map[string]string{}
	for _, id := range ids {
		files := processed()
		if strings.HasSuffix(id, "-big") {
			files["traces/stats_ctx_0x1"] = big.String()
		}
		r.files(id, files)
		tree, err := tracedir.Walk(filepath.Join(r.root, id))
		if err != nil {
			t.Fatal(err)
		}
		sums[id], _ = tracedir.UploadSum(tree, nil)
	}
	return sums
}

// TestFilesChangedWhileProcessingIsNotReady: a trace whose data file
// changed after its upload was complete (after the scanner's last walk
// during post-processing, say) is not made ready on the earlier files: it
// stays processing for the scanner to start over. One whose files are as
// they were is ready. A trace was ready for a moment on the earlier files,
// and a run launched in that moment simulated them (QA).
func TestFilesChangedWhileProcessingIsNotReady(t *testing.T) {
	r := newRig(t)
	sums := processedTraces(t, r, "changed", "same", "changed-big")
	later := time.Now().Add(time.Minute)
	for _, id := range []string{"changed", "changed-big"} {
		raw := filepath.Join(r.root, id, "traces", "kernel-1-ctx_0x1.trace")
		if err := os.Chtimes(raw, later, later); err != nil { // rewritten: the same size, a new time
			t.Fatal(err)
		}
	}
	var log testkit.SyncBuffer
	p := New(Config{Command: []string{missingCommand}, Root: r.root, WorkDir: r.work, Concurrency: 2,
		Store: r.m, Events: r.mv, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for _, id := range []string{"changed", "same", "changed-big"} {
		tr := &cascade.Trace{ID: id, State: cascade.TraceProcessing, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}, UploadSum: sums[id]}
		if err := r.m.SaveTrace(t.Context(), tr); err != nil {
			t.Fatal(err)
		}
	}
	r.run(p)
	r.mv.waitMoved(1)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(log.String(), notReadyLog) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the changed trace within 10s; log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tr := r.stored("same"); tr.State != cascade.TraceReady {
		t.Errorf("same files: %s, want READY", tr.State)
	}
	for _, id := range []string{"changed", "changed-big"} {
		if tr := r.stored(id); tr.State != cascade.TraceProcessing {
			t.Errorf("%s: a data file changed: %s, want it left PROCESSING for the scanner", id, tr.State)
		}
	}
}

// TestSameBytesWrittenWhileFinishingIsReady: a data file the S3 endpoint
// writes again with the bytes it had is in place with a new modification
// time until its write ends, when it gets the earlier one back (package
// s3gw). A post-processor that finishes in between waits for the write
// and makes the trace ready; it left it PROCESSING, for a scanner that
// then saw nothing changed (CI: TestIdenticalReuploadKeepsTheTraceReady).
func TestSameBytesWrittenWhileFinishingIsReady(t *testing.T) {
	r := newRig(t)
	ids := []string{"rewritten", "rewritten-big"} // finishBatch's, finish's
	sums := processedTraces(t, r, ids...)
	restore := map[string]time.Time{}
	later := time.Now().Add(time.Minute)
	for _, id := range ids {
		raw := filepath.Join(r.root, id, "traces", "kernel-1-ctx_0x1.trace")
		fi, err := os.Stat(raw)
		if err != nil {
			t.Fatal(err)
		}
		restore[raw] = fi.ModTime()
		if err := os.Chtimes(raw, later, later); err != nil { // the write's file, in place
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	writing, ended := true, time.Time{}
	asked := map[string]int{}
	p := New(Config{Command: []string{missingCommand}, Root: r.root, WorkDir: r.work, Concurrency: 2,
		Store: r.m, Events: r.mv, Logger: slog.New(slog.DiscardHandler),
		Writing: func(id string, since time.Time) bool {
			mu.Lock()
			defer mu.Unlock()
			asked[id]++
			return writing || !since.After(ended)
		}})
	for _, id := range ids {
		tr := &cascade.Trace{ID: id, State: cascade.TraceProcessing, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}, UploadSum: sums[id]}
		if err := r.m.SaveTrace(t.Context(), tr); err != nil {
			t.Fatal(err)
		}
	}
	r.run(p)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		waiting := asked[ids[0]] >= 2 && asked[ids[1]] >= 2 // each walked again at least once
		mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the post-processor did not wait for the writes within 10s: asked %v", asked)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, id := range ids {
		if tr := r.stored(id); tr.State != cascade.TraceProcessing {
			t.Fatalf("%s: %s while its file is written, want PROCESSING", id, tr.State)
		}
	}
	// The writes end: the files get their times back.
	for raw, mt := range restore {
		if err := os.Chtimes(raw, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	writing, ended = false, time.Now()
	mu.Unlock()
	r.mv.waitMoved(2)
	for _, id := range ids {
		if tr := r.stored(id); tr.State != cascade.TraceReady {
			t.Errorf("%s: %s once the same bytes' write ended, want READY", id, tr.State)
		}
	}
}
