package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
)

// TestMissingKernelFileFailsTheRun: a run of a ready trace whose kernel
// file was deleted afterwards fails before its simulator starts, naming
// the list's line and the file and saying what to do, whether it
// simulates every kernel or a subset holding the missing one; a subset
// without it still starts.
func TestMissingKernelFileFailsTheRun(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	gone := filepath.Join(r.bucket, quickstartID, "traces", "kernel-3-ctx_0x55d2c3a1e4f0.traceg")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	r.run()
	ctx := context.Background()
	whole := r.launch()
	subset, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: quickstartID, SimConfig: simconfigtest.H100, KernelIDs: []int{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{whole.ID, subset.ID} {
		var got cascade.Run
		select {
		case got = <-r.ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %s did not end", id)
		}
		want := `trace "` + quickstartID + `": traces/kernelslist.g line 7 names kernel-3-ctx_0x55d2c3a1e4f0.traceg, which is not on disk`
		if got.State != cascade.RunFailed || !strings.HasPrefix(cascade.Deref(got.Error), want) ||
			!strings.Contains(cascade.Deref(got.Error), `retryTrace(id: "`+quickstartID+`")`) {
			t.Fatalf("run %s: %s, %q; want FAILED, %q", got.ID, got.State, cascade.Deref(got.Error), want)
		}
		if line := "traces/kernelslist.g line 7 names kernel-3-ctx_0x55d2c3a1e4f0.traceg, which is not on disk"; got.FailureClass != cascade.FailureMissingTrace || got.FailureLine != line {
			t.Errorf("run %s: class %q, line %q; want %s, %q", got.ID, got.FailureClass, got.FailureLine, cascade.FailureMissingTrace, line)
		}
	}
	r.noStart()

	ok, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: quickstartID, SimConfig: simconfigtest.H100, KernelIDs: []int{1, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if j := r.nextStart(); j.Run.ID != ok.ID || j.Total != 2 {
		t.Fatalf("started %s with %d kernels, want %s with 2", j.Run.ID, j.Total, ok.ID)
	}
}
