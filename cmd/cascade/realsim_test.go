package main

import (
	"context"
	"os"
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

// TestRealSimulatorRefuses: the server asks the real simulator (Accel-Sim
// dev) at start what it can do. SM3_KEPLER_TITAN, whose -smem_latency it
// does not know, is listed with the simulator's line and not launched;
// the vecAdd trace with its kernel header changed to binary version 90
// (and no trace_gpu_arch in metadata.json) is refused up front, naming
// the versions the simulator decodes and where sm_90 came from.
func TestRealSimulatorRefuses(t *testing.T) {
	checkout := testkit.RealAccelSim(t)
	src := testkit.RealTrace(t, "vecadd-sm61")
	trace := t.TempDir()
	if err := os.CopyFS(trace, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	kernel := filepath.Join(trace, "traces", "kernel-1.trace")
	b, err := os.ReadFile(kernel)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "-binary version = 61", "-binary version = 90", 1))
	meta := `{"run_name": "vecadd-h100", "model": "vecAdd", "gpu": "NVIDIA H100"}`
	for f, data := range map[string][]byte{kernel: b, filepath.Join(trace, "metadata.json"): []byte(meta)} {
		os.Chmod(f, 0o644)
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	addr, out, _ := checkoutServer(t, data, "CASCADE_ACCELSIM_DIR="+checkout)
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })

	var q struct {
		SimConfigs []struct {
			Name    string
			Error   *string
			Checked bool
		}
	}
	testkit.Eventually(t, time.Minute, "configs checked", func() bool {
		gqlVars(t, addr, `{ simConfigs { name error checked } }`, nil, &q)
		return len(q.SimConfigs) > 0 && q.SimConfigs[0].Checked
	})
	const refusal = "the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"
	for _, c := range q.SimConfigs {
		switch c.Name {
		case "SM3_KEPLER_TITAN":
			if c.Error == nil || *c.Error != refusal {
				t.Errorf("SM3_KEPLER_TITAN: error %v, want %q", c.Error, refusal)
			}
		case "SM6_TITANX", "SM7_QV100":
			if c.Error != nil {
				t.Errorf("%s: error %q", c.Name, *c.Error)
			}
		}
	}

	prefix := filepath.Join(data, "s3", "cascade", "traces")
	for id, dir := range map[string]string{"vecadd": src, "vecadd-h100": trace} {
		if _, err := upload.Upload(context.Background(), upload.Options{Source: dir, PrefixDir: prefix, RunName: id}); err != nil {
			t.Fatal(err)
		}
		waitTrace(t, addr, id, "READY")
	}
	errs := gqlVars(t, addr, `mutation { launchRun(input: {traceId: "vecadd", simConfig: "SM3_KEPLER_TITAN"}) { id } }`, nil, nil)
	if len(errs) != 1 || !strings.Contains(errs[0], "SM3_KEPLER_TITAN cannot be used: "+refusal) {
		t.Errorf("launch on SM3_KEPLER_TITAN: %v", errs)
	}

	var tr struct {
		Trace struct {
			TraceGpuArch         string
			Simulatable          bool
			NotSimulatableReason *string
		}
	}
	gqlVars(t, addr, `{ trace(id: "vecadd-h100") { traceGpuArch simulatable notSimulatableReason } }`, nil, &tr)
	const why = "decodes binary versions 35, 60, 61, 70, 75, 80, 86; this trace is sm_90 (from traces/kernel-1.trace: -binary version = 90): it needs a simulator that decodes 90 (Accel-Sim 2.0)"
	if tr.Trace.TraceGpuArch != "sm_90" || tr.Trace.Simulatable || tr.Trace.NotSimulatableReason == nil || !strings.Contains(*tr.Trace.NotSimulatableReason, why) {
		t.Errorf("sm_90 trace: %+v", tr.Trace)
	}
	errs = gqlVars(t, addr, `mutation { launchRun(input: {traceId: "vecadd-h100", simConfig: "SM7_QV100"}) { id } }`, nil, nil)
	if len(errs) != 1 || !strings.Contains(errs[0], why) {
		t.Errorf("launch of the sm_90 trace: %v", errs)
	}
	gqlVars(t, addr, `{ trace(id: "vecadd") { simulatable notSimulatableReason } }`, nil, &tr)
	if !tr.Trace.Simulatable || tr.Trace.NotSimulatableReason != nil {
		t.Errorf("sm_61 trace: %+v", tr.Trace)
	}
}
