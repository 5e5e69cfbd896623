package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// serveProcess starts `cascade serve` as its own process.
func serveProcess(t *testing.T, dataDir string, env ...string) (addr string, cmd *exec.Cmd) {
	t.Helper()
	addr, cmd, _ = testkit.ServeProcess(t, dataDir, env...)
	return addr, cmd
}

func gql(t *testing.T, addr, query string, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	json.NewDecoder(resp.Body).Decode(&r)
	if len(r.Errors) > 0 {
		t.Fatalf("%s: %v", query, r.Errors)
	}
	if out != nil {
		json.Unmarshal(r.Data, out)
	}
}

// TestSimulatorDiesWithAKilledServer: a SIGKILLed server leaves no
// simulator behind, so its restart never runs two copies of one run.
func TestSimulatorDiesWithAKilledServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim := fakesim.Build(t)
	env := []string{
		"CASCADE_SIM_CMD=env FAKESIM_MODE=ignoreterm FAKESIM_DELAY=1s " + sim,
		"CASCADE_SIM_CONFIGS_DIR=" + simconfigtest.Write(t, t.TempDir()),
	}
	addr, server := serveProcess(t, dir, env...)
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	prefix := filepath.Join(dir, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: prefix, RunName: "qs"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "trace ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		gql(t, addr, `{ trace(id: "qs") { state } }`, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	var l struct{ LaunchRun struct{ ID string } }
	gql(t, addr, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { id } }`, &l)
	simulators := func() (n int) {
		for _, l := range testkit.ProcsIn(filepath.Join(dir, "work", "runs")) {
			if strings.Contains(l, "accel-sim.out -trace ") {
				n++
			}
		}
		return n
	}
	running := func() bool { return simulators() > 0 }
	testkit.Eventually(t, 10*time.Second, "simulator started", running)
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()
	testkit.Eventually(t, 5*time.Second, "simulator gone with its server", func() bool { return !running() })

	// The next server runs it again from the start, once.
	addr, _ = serveProcess(t, dir, env...)
	var r struct {
		Run struct {
			State   string
			History []string
		}
	}
	// Until the new server has requeued it, the row still says RUNNING
	// from before the kill: wait for the requeue's note too.
	testkit.Eventually(t, 10*time.Second, "run requeued and running", func() bool {
		gql(t, addr, `{ run(id: "`+l.LaunchRun.ID+`") { state history } }`, &r)
		return r.Run.State == "RUNNING" && len(r.Run.History) > 0
	})
	if len(r.Run.History) != 1 || !strings.Contains(r.Run.History[0], "again from the beginning") {
		t.Fatalf("history %q", r.Run.History)
	}
	// RUNNING is committed before the simulator starts.
	testkit.Eventually(t, 10*time.Second, "simulator started again", running)
	if n := simulators(); n != 1 {
		t.Fatalf("%d simulators of one run", n)
	}
}

// TestServeConfig: flags win over CASCADE_* variables, which win over the
// defaults.
func TestServeConfig(t *testing.T) {
	t.Setenv("CASCADE_BUCKET", "from-env")
	t.Setenv("CASCADE_PREFIX", "")
	cfg, _, _, err := parseServe([]string{"--addr", "127.0.0.1:9999"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bucket != "from-env" || cfg.Prefix != "traces" || cfg.Addr != "127.0.0.1:9999" || cfg.DataDir != "./cascade-data" || cfg.GCHeapFloor != 64<<20 {
		t.Fatalf("%+v", cfg)
	}
	if _, _, _, err := parseServe([]string{"--log-format", "xml"}, &bytes.Buffer{}); err == nil {
		t.Fatal("bad log format accepted")
	}
	t.Setenv("CASCADE_GC_HEAP_FLOOR_MIB", "0")
	if cfg, _, _, err := parseServe(nil, &bytes.Buffer{}); err != nil || cfg.GCHeapFloor != 0 {
		t.Fatalf("CASCADE_GC_HEAP_FLOOR_MIB=0: floor %d, %v", cfg.GCHeapFloor, err)
	}
	if _, _, _, err := parseServe([]string{"--gc-heap-floor-mib", "-1"}, &bytes.Buffer{}); err == nil {
		t.Fatal("a negative GC heap floor accepted")
	}
	// Simulations at once: sized by the machine (0) unless given.
	if cfg.RunConcurrency != 0 {
		t.Fatalf("RunConcurrency %d by default, want 0: sized by the machine", cfg.RunConcurrency)
	}
	t.Setenv("CASCADE_RUN_CONCURRENCY", "3")
	if cfg, _, _, err := parseServe(nil, &bytes.Buffer{}); err != nil || cfg.RunConcurrency != 3 {
		t.Fatalf("CASCADE_RUN_CONCURRENCY=3: %d, %v", cfg.RunConcurrency, err)
	}
	if _, _, _, err := parseServe([]string{"--run-concurrency", "-1"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CASCADE_RUN_CONCURRENCY") {
		t.Fatalf("a negative run concurrency: %v", err)
	}
}

// TestServeRelativePaths: a relative data directory, sim configs directory
// and simulator or post-processor command, from CASCADE_* or from flags,
// mean what they say from the directory `cascade serve` starts in, on
// SQLite and PostgreSQL: a raw trace uploaded with `cascade upload` from
// the same directory is post-processed, and a run of it succeeds.
func TestServeRelativePaths(t *testing.T) {
	t.Parallel()
	for _, v := range []relativeSetup{
		{name: "env", env: []string{"CASCADE_DATA_DIR=cascade-data", "CASCADE_SIM_CMD=bin/accel-sim.out", "CASCADE_SIM_CONFIGS_DIR=configs"},
			dataDir: "cascade-data"},
		{name: "flags", serveArgs: []string{"--data-dir", "./state/../data", "--sim-cmd", "./bin/accel-sim.out",
			"--sim-configs-dir", "./configs", "--postprocess-cmd", "bin/cascade postprocess"},
			uploadArgs: []string{"--data-dir", "./state/../data"}, dataDir: "data"},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			for dbName, dbURL := range dbtest.DatabaseURLs(t) { // a fresh schema per setup
				t.Run(dbName, func(t *testing.T) {
					t.Parallel()
					v.check(t, dbURL)
				})
			}
		})
	}
}

// relativeSetup is one way of giving `cascade serve` relative paths.
type relativeSetup struct {
	name       string
	env        []string // the only CASCADE_* variables set, with the database's
	serveArgs  []string
	uploadArgs []string
	dataDir    string // where the data must land, relative to the working directory
}

func (v relativeSetup) check(t *testing.T, dbURL string) {
	wd := t.TempDir()
	if err := os.Mkdir(filepath.Join(wd, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"bin/cascade": testkit.Program(t, "./cmd/cascade"), "bin/accel-sim.out": fakesim.Build(t)} {
		if err := os.Symlink(target, filepath.Join(wd, link)); err != nil {
			t.Fatal(err)
		}
	}
	simconfigtest.Write(t, filepath.Join(wd, "configs"), simconfigtest.H100)
	src := filepath.Join(wd, "src")
	if _, err := tracegen.Generate(context.Background(), filepath.Join(src, "traces"), tracegen.Config{Kernels: 2, Contexts: 1}); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFileAtomic(t, filepath.Join(src, "metadata.json"), []byte(`{"model": "relative/Model", "trace_gpu_arch": "sm_90"}`))

	env := userEnv(append(v.env, "CASCADE_SCAN_INTERVAL=200ms")...)
	if dbURL != "" {
		env = append(env, "CASCADE_DATABASE_URL="+dbURL)
	}
	addr := freeAddr(t)
	server := exec.Command("bin/cascade", append([]string{"serve", "--addr", addr}, v.serveArgs...)...)
	server.Dir, server.Env = wd, env
	var out bytes.Buffer
	server.Stdout, server.Stderr = &out, &out
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		server.Process.Signal(os.Interrupt)
		server.Wait()
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	testkit.Eventually(t, 20*time.Second, "server up", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	up := exec.Command("bin/cascade", append(append([]string{"upload"}, v.uploadArgs...), "src", "--run-name", "raw")...)
	up.Dir, up.Env = wd, env
	if msg, err := up.CombinedOutput(); err != nil {
		t.Fatalf("cascade upload: %v\n%s", err, msg)
	}
	var r struct{ Trace struct{ State, Error string } }
	testkit.Eventually(t, 30*time.Second, "raw trace post-processed", func() bool {
		gql(t, addr, `{ trace(id: "raw") { state error } }`, &r)
		if r.Trace.State == "FAILED" {
			t.Fatalf("trace failed: %s", r.Trace.Error)
		}
		return r.Trace.State == "READY"
	})
	var launched struct{ LaunchRun struct{ ID string } }
	gql(t, addr, `mutation { launchRun(input: {traceId: "raw", simConfig: "SM90_H100"}) { id } }`, &launched)
	var run struct{ Run struct{ State, Error string } }
	testkit.Eventually(t, 30*time.Second, "run finished", func() bool {
		gql(t, addr, `{ run(id: "`+launched.LaunchRun.ID+`") { state error } }`, &run)
		return run.Run.State == "SUCCEEDED" || run.Run.State == "FAILED"
	})
	if run.Run.State != "SUCCEEDED" {
		t.Fatalf("run %s: %s", run.Run.State, run.Run.Error)
	}
	want := []string{"s3/cascade/traces/raw/traces/kernelslist.g", "work/runs/" + launched.LaunchRun.ID}
	if dbURL == "" {
		want = append(want, "cascade.db")
	}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(wd, v.dataDir, f)); err != nil {
			t.Errorf("not in the relative data directory: %v", err)
		}
	}
}

// userEnv is this process's environment without any CASCADE_* variable
// or GOWORK (a user's shell: scripts/test.sh runs the tests in the
// workspace of servertests/go.work, which holds this checkout, not a
// copy a test makes of it), plus extra. One default is never taken: the S3
// endpoint goes on a free port, as servers of parallel tests (and other
// programs on the machine) would share its fixed one.
func userEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CASCADE_") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "CASCADE_S3_ADDR=127.0.0.1:0"), extra...)
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestServePrintsTheS3Endpoint starts `cascade serve` twice on one data
// directory with no S3 keys configured: the first start makes a key pair in
// <data dir>/s3-keys.env, readable by its owner only, and prints the
// endpoint with upload commands; the second start reuses the pair.
func TestServePrintsTheS3Endpoint(t *testing.T) {
	dataDir := t.TempDir()
	var printed []string
	for i := range 2 {
		cmd := exec.Command(testkit.Program(t, "./cmd/cascade"), "serve")
		cmd.Env = append(os.Environ(), "CASCADE_DATA_DIR="+dataDir, "CASCADE_ADDR=127.0.0.1:0", "CASCADE_S3_ADDR=127.0.0.1:0",
			"CASCADE_S3_ACCESS_KEY=", "CASCADE_S3_SECRET_KEY=")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		lines := bufio.NewScanner(stdout)
		for lines.Scan() && !strings.HasPrefix(lines.Text(), "  cascade upload") {
			out.WriteString(lines.Text() + "\n")
		}
		cmd.Process.Signal(os.Interrupt)
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("serve: %v\n%s", err, out.String())
		}
		text := out.String()
		for _, want := range []string{"cascade: S3 endpoint http://127.0.0.1:", "export AWS_ACCESS_KEY_ID=", "aws --endpoint-url http://127.0.0.1:", "rclone copy "} {
			if !strings.Contains(text, want) {
				t.Fatalf("start %d printed no %q:\n%s", i+1, want, text)
			}
		}
		if made := strings.Contains(text, "new keys written to "+filepath.Join(dataDir, "s3-keys.env")); made != (i == 0) {
			t.Fatalf("start %d: new keys %v:\n%s", i+1, made, text)
		}
		env := text[strings.Index(text, "export AWS_ACCESS_KEY_ID="):]
		printed = append(printed, env[:strings.Index(env, "\n")])
	}
	if printed[0] != printed[1] {
		t.Fatalf("the second start has other keys: %q, then %q", printed[0], printed[1])
	}
	fi, err := os.Stat(filepath.Join(dataDir, "s3-keys.env"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, fi.Mode())
	}
	data, _ := os.ReadFile(filepath.Join(dataDir, "s3-keys.env"))
	if !strings.Contains(printed[0], strings.TrimPrefix(strings.Split(string(data), "\n")[1], "CASCADE_S3_ACCESS_KEY=")) {
		t.Fatalf("printed %q, key file:\n%s", printed[0], data)
	}
}

// TestServeCounterMapFile: --counter-map-file (CASCADE_COUNTER_MAP_FILE)
// adds its pairs before the built-in ones, for statistics runs read
// (CASCADE_SIM_STATS_FILE's too); a bad line, or a statistic no run
// reads, stops serve with its file and line.
func TestServeCounterMapFile(t *testing.T) {
	dir := t.TempDir()
	stats := filepath.Join(dir, "stats.txt")
	good := filepath.Join(dir, "good.txt")
	unknown := filepath.Join(dir, "unknown.txt")
	bad := filepath.Join(dir, "bad.txt")
	for path, text := range map[string]string{
		stats:   "l2_texture_hits aggregate accesses ^\\s*L2_cache_stats_breakdown\\[TEXTURE_ACC_R\\]\\[HIT\\]\\s*=\\s*(\\S+)\n",
		good:    "# mine\nl2_texture_hits ncu all lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum\ncycles nvprof RTX_2060 Duration * 1.68\n",
		unknown: "# mine\n\nl2_texture_hits ncu all x\n",
		bad:     "\n\ncycles ncu all (x\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _, _, err := parseServe(nil, &bytes.Buffer{})
	if err != nil || cfg.CounterMap != nil {
		t.Fatalf("without a file: table %v, %v", cfg.CounterMap, err)
	}
	cfg, _, _, err = parseServe([]string{"--sim-stats-file", stats, "--counter-map-file", good}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if ps := cfg.CounterMap.Pairs; len(ps) <= 2 || ps[0].Stat != "l2_texture_hits" || ps[1].Source != good+":3" {
		t.Fatalf("the file's pairs first: %+v", ps[:2])
	}
	_, _, _, err = parseServe([]string{"--counter-map-file", unknown}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), unknown+`:3: statistic "l2_texture_hits" is not one`) {
		t.Fatalf("a statistic no run reads: %v", err)
	}
	t.Setenv("CASCADE_COUNTER_MAP_FILE", bad)
	var stderr bytes.Buffer
	if code := serve(context.Background(), []string{"--data-dir", dir}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), bad+":3:") {
		t.Fatalf("serve with a bad file: exit %d, %q", code, stderr.String())
	}
}

// TestServeSimStatsFile: --sim-stats-file (CASCADE_SIM_STATS_FILE) adds
// its counters to the built-in ones; a bad file stops serve with its file
// and line.
func TestServeSimStatsFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(good, []byte("# mine\nl2_texture_hits aggregate accesses ^\\s*L2_cache_stats_breakdown\\[TEXTURE_ACC_R\\]\\[HIT\\]\\s*=\\s*(\\S+)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("\n\nx often n ^x=(\\d+)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, _, err := parseServe(nil, &bytes.Buffer{})
	if err != nil || cfg.SimStats != nil {
		t.Fatalf("without a file: table %v, %v", cfg.SimStats, err)
	}
	t.Setenv("CASCADE_SIM_STATS_FILE", good)
	cfg, _, _, err = parseServe(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SimStats == nil || cfg.SimStats.Index("l2_texture_hits") < 0 || cfg.SimStats.Index("cycles") < 0 {
		t.Fatalf("the file's counter and the built-in ones: %v", cfg.SimStats)
	}
	_, _, _, err = parseServe([]string{"--sim-stats-file", bad}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Fatalf("a bad file: %v, want an error naming %s:3", err, bad)
	}
	var stderr bytes.Buffer
	if code := serve(context.Background(), []string{"--sim-stats-file", bad, "--data-dir", dir}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), bad+":3:") {
		t.Fatalf("serve with a bad file: exit %d, %q", code, stderr.String())
	}
}
