package scanner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestHugeMetadataFailsTheTrace: a metadata.json over
// tracedir.MaxMetadataBytes fails its trace, once it stopped changing,
// with an error naming the file, its size and the limit; it is never read
// whole (the file is sparse). A smaller one uploaded over it starts the
// trace over.
func TestHugeMetadataFailsTheTrace(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	b := newBucket(t)
	files := perContext()
	b.write("big", with(files, "metadata.json", `{"prompts": ["`))
	p := filepath.Join(b.root, "big", tracedir.MetadataFile)
	if err := os.Truncate(p, 300<<20); err != nil {
		t.Fatal(err)
	}
	b.s.scanTrace(ctx, "big", t0)
	b.expect("first sight", `events ["updated big UPLOADING"] processed [] stopped []`)
	b.s.scanTrace(ctx, "big", t0.Add(testInterval))
	b.expect("failed", `events ["updated big FAILED"] processed [] stopped ["big"]`)
	tr := b.stored("big")
	for _, s := range []string{"metadata.json: ", "314572800 bytes", "limit of 32 MiB"} {
		if tr.Error == nil || !strings.Contains(*tr.Error, s) {
			t.Errorf("error %q does not say %q", cascade.Deref(tr.Error), s)
		}
	}
	if tr.Retryable() {
		t.Error("retryable: a retry reads the same metadata.json")
	}

	b.write("big", map[string]string{"metadata.json": meta(nil, files)})
	b.s.scanTrace(ctx, "big", t0.Add(2*testInterval))
	if tr := b.stored("big"); tr.State != cascade.TraceProcessing {
		t.Errorf("a small metadata.json uploaded over it: %s (%v), want PROCESSING", tr.State, cascade.Deref(tr.Error))
	}
}

// TestRealTimingWarning: a real-timing file that is meant but unusable
// (here metadata.json names one that is not there) leaves hasRealTiming
// false and says why in the trace's warnings.
func TestRealTimingWarning(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	files := perContext()
	b.write("rt", with(files, "metadata.json", meta(map[string]any{"real_timing": "nothere.json"}, files), "real_timing.json", `[{"kernel_id": "1"}]`))
	b.s.scanTrace(ctx, "rt", time.Now())
	tr := b.stored("rt")
	want := `metadata.json: real_timing: "nothere.json" is not in the trace; the trace has no real timing (hasRealTiming is false)`
	if tr.HasRealTiming || len(tr.ScanWarnings) != 1 || tr.ScanWarnings[0] != want {
		t.Errorf("hasRealTiming %v, warnings %q; want false, [%q]", tr.HasRealTiming, tr.ScanWarnings, want)
	}
}
