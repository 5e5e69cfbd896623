package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/accelsimtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/upload"
)

// checkoutServer runs `cascade serve` as its own process with the
// environment given (CASCADE_SIM_CMD and CASCADE_SIM_CONFIGS_DIR unset, as
// a user who only names the checkout) and returns its address and output.
func checkoutServer(t testing.TB, dataDir string, env ...string) (string, *testkit.SyncBuffer, *exec.Cmd) {
	t.Helper()
	addr, cmd, out := testkit.ServeProcess(t, dataDir, env...)
	return addr, out, cmd
}

// gqlVars posts a query with variables and returns its data and errors.
func gqlVars(t testing.TB, addr, query string, vars map[string]any, out any) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if out != nil {
		json.Unmarshal(r.Data, out)
	}
	var msgs []string
	for _, e := range r.Errors {
		msgs = append(msgs, e.Message)
	}
	return msgs
}

// uploadRawTrace writes a small raw NVBit trace taken on sm_61 (its kernel
// vecAdd, mangled) and uploads it into the server's bucket, as
// `cascade upload` does.
func uploadRawTrace(t *testing.T, dataDir, id string) {
	t.Helper()
	src := t.TempDir()
	gen := exec.Command(testkit.Program(t, "./cmd/cascade"), "gentrace", "-kernels", "2", filepath.Join(src, "traces"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gentrace: %v\n%s", err, out)
	}
	meta := `{"model": "vecAdd", "gpu": "NVIDIA TITAN X (Pascal)", "trace_gpu_arch": "sm_61", "suggested_sim_config": "SM6_TITANX"}`
	if err := os.WriteFile(filepath.Join(src, "metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dataDir, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: prefix, RunName: id}); err != nil {
		t.Fatal(err)
	}
}

type checkoutRun struct {
	ID, State         string
	Error             *string
	CrossArchitecture bool
}

func waitTrace(t testing.TB, addr, id string, state string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "trace "+id+" "+state, func() bool {
		var r struct{ Trace *struct{ State string } }
		gqlVars(t, addr, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
		return r.Trace != nil && r.Trace.State == state
	})
}

func launchAndWait(t *testing.T, addr, trace, config string) checkoutRun {
	t.Helper()
	var l struct{ LaunchRun checkoutRun }
	if errs := gqlVars(t, addr, `mutation($t: ID!, $c: String!) { launchRun(input: {traceId: $t, simConfig: $c}) { id state } }`,
		map[string]any{"t": trace, "c": config}, &l); len(errs) > 0 {
		t.Fatalf("launch on %s: %v", config, errs)
	}
	var r struct{ Run checkoutRun }
	testkit.Eventually(t, 30*time.Second, "run on "+config+" over", func() bool {
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { id state error crossArchitecture } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
		return r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED"
	})
	return r.Run
}

// TestAccelSimCheckout: CASCADE_ACCELSIM_DIR alone is enough. The server
// says what it found, the built-in post-processor writes the .traceg the
// checkout's 1.x simulator reads, runs find their config's side files and
// GPGPU-Sim's library, a config of another architecture runs, and a config
// the simulator rejects is listed, once the server has asked the simulator
// at start, with the simulator's own line, and not launched.
func TestAccelSimCheckout(t *testing.T) {
	t.Parallel()
	checkout := accelsimtest.Write(t, t.TempDir(), fakesim.Version1)
	data := t.TempDir()
	addr, out, _ := checkoutServer(t, data, "CASCADE_ACCELSIM_DIR="+checkout)
	// The report is printed once the server listens: it may follow /healthz's first answer.
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })
	for _, want := range []string{
		"Accel-Sim checkout " + checkout + ": simulator " + filepath.Join(checkout, "gpu-simulator/bin/release/accel-sim.out"),
		"Accel-Sim checkout " + checkout + ": 5 tested configs",
		"Accel-Sim checkout " + checkout + ": library path " + filepath.Join(checkout, accelsimtest.LibDir),
		"the built-in post-processor writes traceg: picked because the checkout's simulator reads .traceg and .traceg.xz only (Accel-Sim 1.x)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("start-up report lacks %q:\n%s", want, out.String())
		}
	}

	uploadRawTrace(t, data, "vecadd")
	waitTrace(t, addr, "vecadd", "READY")
	list, err := os.ReadFile(filepath.Join(data, "s3", "cascade", "traces", "vecadd", "traces", "kernelslist.g"))
	if err != nil || !strings.Contains(string(list), ".traceg\n") || strings.Contains(string(list), ".tracez") {
		t.Fatalf("kernelslist.g %q, %v", list, err)
	}

	// The five paired configs, and SM2_GTX480, which has no trace.config:
	// listed as one that cannot run, saying why.
	var cfgs struct {
		SimConfigs []struct {
			Name  string
			Error *string
		}
	}
	gqlVars(t, addr, `{ simConfigs { name error } }`, nil, &cfgs)
	if len(cfgs.SimConfigs) != 6 || cfgs.SimConfigs[0].Name != "SM2_GTX480" || cfgs.SimConfigs[0].Error == nil ||
		!strings.Contains(*cfgs.SimConfigs[0].Error, "trace.config: missing: this config has no trace-driven half") {
		t.Fatalf("configs %+v", cfgs.SimConfigs)
	}
	for config, cross := range map[string]bool{"SM6_TITANX": false, "SM7_QV100": true, "SM90_H100": true} {
		r := launchAndWait(t, addr, "vecadd", config)
		if r.State != "SUCCEEDED" || r.CrossArchitecture != cross {
			t.Errorf("run on %s: %+v, want SUCCEEDED, crossArchitecture %v", config, r, cross)
		}
	}
	var checked struct {
		SimConfigs []struct {
			Name    string
			Error   *string
			Checked bool
		}
	}
	testkit.Eventually(t, 30*time.Second, "configs checked", func() bool {
		gqlVars(t, addr, `{ simConfigs { name error checked } }`, nil, &checked)
		return len(checked.SimConfigs) > 0 && checked.SimConfigs[0].Checked
	})
	const refusal = "the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"
	for _, c := range checked.SimConfigs {
		if c.Name == accelsimtest.Kepler && (c.Error == nil || *c.Error != refusal) {
			t.Errorf("%s: error %v, want %q", c.Name, c.Error, refusal)
		}
	}
	errs := gqlVars(t, addr, `mutation($c: String!) { launchRun(input: {traceId: "vecadd", simConfig: $c}) { id } }`,
		map[string]any{"c": accelsimtest.Kepler}, nil)
	if len(errs) != 1 || !strings.Contains(errs[0], accelsimtest.Kepler+" cannot be used: "+refusal) {
		t.Errorf("launch on %s: %v", accelsimtest.Kepler, errs)
	}
}

// TestRejectedTraceFormatThenRetry: a 1.x simulator given .tracez fails the
// run with an error naming CASCADE_TRACE_FORMAT and retryTrace; following
// it (restart with the format the checkout reads, retry the ready trace)
// post-processes the trace again as .traceg, and the run succeeds.
func TestRejectedTraceFormatThenRetry(t *testing.T) {
	t.Parallel()
	checkout := accelsimtest.Write(t, t.TempDir(), fakesim.Version1)
	data := t.TempDir()
	addr, out, cmd := checkoutServer(t, data, "CASCADE_ACCELSIM_DIR="+checkout, "CASCADE_TRACE_FORMAT=tracez")
	// The report is printed once the server listens: it may follow /healthz's first answer.
	want := "warning: CASCADE_TRACE_FORMAT=tracez, but " + "gpu-simulator/trace-parser reads .traceg and .traceg.xz only"
	testkit.Eventually(t, 10*time.Second, "start-up report says "+want, func() bool { return strings.Contains(out.String(), want) })
	uploadRawTrace(t, data, "vecadd")
	waitTrace(t, addr, "vecadd", "READY")
	r := launchAndWait(t, addr, "vecadd", "SM6_TITANX")
	for _, want := range []string{"Unsupported file type!", "kernel-1.tracez", "signal: aborted", "CASCADE_TRACE_FORMAT=traceg", `retryTrace(id: "vecadd")`} {
		if r.State != "FAILED" || r.Error == nil || !strings.Contains(*r.Error, want) {
			t.Fatalf("run %+v: error lacks %q", r, want)
		}
	}

	cmd.Process.Kill()
	cmd.Wait()
	addr, _, _ = checkoutServer(t, data, "CASCADE_ACCELSIM_DIR="+checkout)
	var retried struct{ RetryTrace struct{ State string } }
	if errs := gqlVars(t, addr, `mutation { retryTrace(id: "vecadd") { state } }`, nil, &retried); len(errs) > 0 {
		t.Fatalf("retryTrace: %v", errs)
	}
	waitTrace(t, addr, "vecadd", "READY")
	traces := filepath.Join(data, "s3", "cascade", "traces", "vecadd", "traces")
	list, err := os.ReadFile(filepath.Join(traces, "kernelslist.g"))
	if err != nil || !strings.Contains(string(list), ".traceg\n") {
		t.Fatalf("kernelslist.g after the retry %q, %v", list, err)
	}
	if old, _ := filepath.Glob(filepath.Join(traces, "*.tracez")); len(old) > 0 {
		t.Errorf("the .tracez files are left: %v", old)
	}
	if r := launchAndWait(t, addr, "vecadd", "SM6_TITANX"); r.State != "SUCCEEDED" {
		t.Fatalf("run after the retry: %+v", r)
	}
}

// TestSimSetup: CASCADE_SIM_CMD and CASCADE_SIM_CONFIGS_DIR win over the
// checkout, its library path reaches the simulator's environment, and a
// bad setting stops serve with an error naming it.
func TestSimSetup(t *testing.T) {
	checkout := accelsimtest.Write(t, t.TempDir(), fakesim.Version2)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CASCADE_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("LD_LIBRARY_PATH", "/opt/other")
	t.Setenv("CASCADE_ACCELSIM_DIR", checkout)
	cfg, _, _, err := parseServe(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.SimCmd, " ") != filepath.Join(checkout, "gpu-simulator/bin/release/accel-sim.out") ||
		cfg.SimConfigsDir != filepath.Join(checkout, "gpu-simulator/gpgpu-sim/configs/tested-cfgs") ||
		cfg.SimTraceConfigsDir != filepath.Join(checkout, "gpu-simulator/configs/tested-cfgs") ||
		!slices.Contains(cfg.SimEnv, "LD_LIBRARY_PATH="+filepath.Join(checkout, accelsimtest.LibDir)+":/opt/other") ||
		cfg.TraceFormat != "tracez" || slices.Contains(cfg.PostprocessCmd, "--text") {
		t.Fatalf("from the checkout: %+v", cfg)
	}

	t.Setenv("CASCADE_SIM_CMD", "/my/accel-sim.out")
	cfg, _, _, err = parseServe([]string{"--sim-configs-dir", "/my/configs", "--trace-format", "traceg"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Join(cfg.Report, "\n")
	if strings.Join(cfg.SimCmd, " ") != "/my/accel-sim.out" || cfg.SimConfigsDir != "/my/configs" || cfg.SimTraceConfigsDir != "" ||
		cfg.TraceFormat != "traceg" || !slices.Contains(cfg.PostprocessCmd, "--text") ||
		!strings.Contains(report, "CASCADE_SIM_CMD overrides") || !strings.Contains(report, "CASCADE_SIM_CONFIGS_DIR overrides") ||
		!strings.Contains(report, "warning: CASCADE_TRACE_FORMAT=traceg, but gpu-simulator/trace-parser reads .tracez") {
		t.Fatalf("overridden: %+v\n%s", cfg, report)
	}

	for name, args := range map[string][]string{
		"trace format": {"--trace-format", "zip"},
		"checkout":     {"--accelsim-dir", filepath.Join(checkout, "nope")},
	} {
		if _, _, _, err := parseServe(args, &bytes.Buffer{}); err == nil {
			t.Errorf("bad %s accepted", name)
		}
	}
}
