package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/upload"
)

// realRun is what the tests of the real simulator read of a run.
type realRun struct {
	ID, State string
	Error     *string
	Kernels   []struct {
		Name            string
		SimCycles       int64
		SimInstructions int64
	}
}

// TestRealAccelSim: the raw vecAdd trace as the profiler uploads it,
// post-processed by the built-in post-processor into the .traceg the real
// simulator (Accel-Sim dev) reads, simulated on SM6_TITANX and SM7_QV100
// through the API: both succeed with the cycles and instructions
// ../shared/accelsim/README.md gives.
func TestRealAccelSim(t *testing.T) {
	checkout := testkit.RealAccelSim(t)
	trace := testkit.RealTrace(t, "vecadd-sm61")
	data := t.TempDir()
	addr, out, _ := checkoutServer(t, data, "CASCADE_ACCELSIM_DIR="+checkout, "CASCADE_RUN_CONCURRENCY=2")
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })

	prefix := filepath.Join(data, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: trace, PrefixDir: prefix, RunName: "vecadd"}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, addr, "vecadd", "READY")

	want := map[string]int64{"SM6_TITANX": 11789, "SM7_QV100": 8823}
	ids := map[string]string{}
	for config := range want {
		var l struct{ LaunchRun realRun }
		if errs := gqlVars(t, addr, `mutation($t: ID!, $c: String!) { launchRun(input: {traceId: $t, simConfig: $c}) { id state } }`,
			map[string]any{"t": "vecadd", "c": config}, &l); len(errs) > 0 {
			t.Fatalf("launch on %s: %v", config, errs)
		}
		ids[config] = l.LaunchRun.ID
	}
	for config, cycles := range want {
		var r struct{ Run realRun }
		testkit.Eventually(t, 5*time.Minute, "run on "+config+" over", func() bool {
			gqlVars(t, addr, `query($id: ID!) { run(id: $id) { id state error kernels { name simCycles simInstructions } } }`,
				map[string]any{"id": ids[config]}, &r)
			return r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED"
		})
		if r.Run.State != "SUCCEEDED" || len(r.Run.Kernels) != 1 {
			t.Fatalf("run on %s: %+v", config, r.Run)
		}
		k := r.Run.Kernels[0]
		if k.Name != "_Z6vecAddPdS_S_i" || k.SimCycles != cycles || k.SimInstructions != 2203168 {
			t.Errorf("run on %s: %+v, want %d cycles and 2,203,168 instructions", config, k, cycles)
		}
	}
}
