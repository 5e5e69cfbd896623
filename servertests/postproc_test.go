package servertests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

type processedTrace struct {
	ID                 string
	State              string
	Error              *string
	KernelCount        int
	UntracedKernels    int
	PostprocessLogTail []string
}

const fields = `id state error kernelCount untracedKernels postprocessLogTail(lines: 10)`

func findProcessed(t *testing.T, s *servertest.TestServer, id string) *processedTrace {
	t.Helper()
	var r struct{ Trace *processedTrace }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { `+fields+` } }`, map[string]any{"id": id}, &r)
	return r.Trace
}

func waitState(t *testing.T, s *servertest.TestServer, id, want string) processedTrace {
	t.Helper()
	var tr *processedTrace
	testkit.Eventually(t, 20*time.Second, "trace "+id+" "+want, func() bool {
		tr = findProcessed(t, s, id)
		return tr != nil && tr.State == want
	})
	return *tr
}

// uploadRaw writes a raw two-kernel upload (no kernelslist.g) with a
// files list, metadata.json last.
func uploadRaw(t *testing.T, s *servertest.TestServer, id string) {
	t.Helper()
	files := map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernel-2-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernelslist_ctx_0x1":    "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0x1.trace\nkernel-2-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":          "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\nkernel-1-ctx_0x1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\nkernel-2-ctx_0x1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\n",
	}
	var list []map[string]any
	for p, d := range files {
		s.WriteFile(t, id, p, []byte(d))
		list = append(list, map[string]any{"path": p, "size": len(d)})
	}
	meta, _ := json.Marshal(map[string]any{"files": list})
	s.WriteFile(t, id, "metadata.json", meta)
}

func TestContract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		mode      string
		wantState string
		wantErr   []string
	}{
		{name: "OK", mode: "ok", wantState: "READY"},
		{name: "ErrExitCode", mode: "fail", wantState: "FAILED",
			wantErr: []string{"exit 3", "fakepp line 3\nfakepp line 4\nfakepp line 5\nfakepp line 6\nfakepp line 7"}},
		{name: "ErrNoKernelsList", mode: "nolist", wantState: "FAILED", wantErr: []string{"wrote no traces/kernelslist.g", "wrote nothing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := servertest.Server(t, func(cfg *app.Config) { cfg.PostprocessCmd = testkit.FakePostprocessor(t, c.mode) })
			uploadRaw(t, s, "raw trace")
			tr := waitState(t, s, "raw trace", c.wantState)
			for _, w := range c.wantErr {
				if tr.Error == nil || !strings.Contains(*tr.Error, w) {
					t.Fatalf("error %q, want it to contain %q", *tr.Error, w)
				}
			}
			if c.wantState == "READY" && tr.KernelCount != 2 {
				t.Fatalf("kernel count %d", tr.KernelCount)
			}
			if c.mode == "fail" && strings.Contains(*tr.Error, "fakepp line 2") {
				t.Fatalf("more than the last 5 lines: %q", *tr.Error)
			}
			log, err := os.ReadFile(filepath.Join(s.DataDir, "work", "postprocess", "raw trace.log"))
			if err != nil || len(log) == 0 {
				t.Fatalf("log: %v %q", err, log)
			}
		})
	}
}

func TestMissingPostprocessorSaysHowToConfigure(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t) // its command is /nonexistent/postprocessor
	uploadRaw(t, s, "x")
	tr := waitState(t, s, "x", "FAILED")
	if !strings.Contains(*tr.Error, "CASCADE_POSTPROCESS_CMD") {
		t.Fatalf("error %q", *tr.Error)
	}
}

func TestRestartDuringPostprocessingRunsItAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := testkit.FakePostprocessor(t, "slow")
	s := servertest.Server(t, func(c *app.Config) { c.DataDir, c.PostprocessCmd = dir, slow })
	uploadRaw(t, s, "slow")
	testkit.Eventually(t, 10*time.Second, "post-processor started", func() bool {
		tr := findProcessed(t, s, "slow")
		return tr != nil && len(tr.PostprocessLogTail) > 0 && tr.PostprocessLogTail[0] == "started"
	})
	// Partial output: an interrupted tool may leave a kernelslist.g behind.
	os.WriteFile(filepath.Join(s.TraceDir("slow"), "traces", "kernelslist.g"), []byte("kernel-1-ctx_0x1.traceg\n"), 0o644)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	// The post-processor's command line holds this test's data directory.
	if out, _ := exec.Command("pgrep", "-f", filepath.Join(dir, "s3")).Output(); len(out) > 0 {
		t.Fatalf("post-processor outlived the server: pids %s", out)
	}
	s2 := servertest.Server(t, func(c *app.Config) { c.DataDir, c.PostprocessCmd = dir, testkit.FakePostprocessor(t, "ok") })
	if tr := findProcessed(t, s2, "slow"); tr.State != "PROCESSING" && tr.State != "READY" {
		t.Fatalf("after restart: %s", tr.State)
	}
	tr := waitState(t, s2, "slow", "READY")
	if tr.KernelCount != 2 || tr.UntracedKernels != 0 { // the rerun's list, not the partial one-kernel list
		t.Fatalf("kernel count %d, %d untraced: the partial kernelslist.g was taken", tr.KernelCount, tr.UntracedKernels)
	}
}

// TestRestartQueuesInStoredOrder: traces left processing, one of them
// interrupted and the others waiting, are queued again on the next start
// in the order they were stored (not by name), and post-processed once
// each, one at a time.
func TestRestartQueuesInStoredOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := []string{"c first", "a second", "b third"}
	s := servertest.Server(t, func(c *app.Config) {
		c.DataDir, c.PostprocessCmd, c.PostprocessConcurrency = dir, testkit.FakePostprocessor(t, "slow"), 1
	})
	for _, id := range ids {
		uploadRaw(t, s, id)
		waitState(t, s, id, "PROCESSING")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "argv.jsonl")
	s2 := servertest.Server(t, func(c *app.Config) {
		c.DataDir, c.PostprocessCmd, c.PostprocessConcurrency = dir, testkit.FakePostprocessor(t, "ok", "--record="+record), 1
	})
	for _, id := range ids {
		waitState(t, s2, id, "READY")
	}
	var order []string
	for _, args := range recorded(t, record) {
		order = append(order, filepath.Base(filepath.Dir(args[2])))
	}
	if strings.Join(order, ", ") != strings.Join(ids, ", ") {
		t.Fatalf("post-processed after the restart in the order %q, want %q", order, ids)
	}
}

func TestRetryAfterFixing(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
	// An upload without its kernel list: the post-processor fails.
	files := map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "-kernel name = k\n",
		"traces/stats_ctx_0x1":          "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\nkernel-1-ctx_0x1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\n",
	}
	var list []map[string]any
	for p, d := range files {
		s.WriteFile(t, "broken", p, []byte(d))
		list = append(list, map[string]any{"path": p, "size": len(d)})
	}
	meta, _ := json.Marshal(map[string]any{"files": list})
	s.WriteFile(t, "broken", "metadata.json", meta)
	if tr := waitState(t, s, "broken", "FAILED"); !strings.Contains(*tr.Error, "no kernelslist") {
		t.Fatalf("error %q", *tr.Error)
	}

	errs := s.Do(t, `mutation { retryTrace(id: "sample") { id } }`, nil, nil)
	if len(errs) != 1 || errs[0].Code() != "CONFLICT" {
		t.Fatalf("retry of a ready trace: %+v", errs)
	}
	errs = s.Do(t, `mutation { retryTrace(id: "nope") { id } }`, nil, nil)
	if len(errs) != 1 || errs[0].Code() != "NOT_FOUND" {
		t.Fatalf("retry of an unknown trace: %+v", errs)
	}
	// The user adds the missing file; metadata.json is unchanged, so only a
	// retry sends the trace round again.
	s.WriteFile(t, "broken", "traces/kernelslist_ctx_0x1", []byte("kernel-1-ctx_0x1.trace\n"))
	var r struct{ RetryTrace processedTrace }
	s.MustDo(t, `mutation { retryTrace(id: "broken") { `+fields+` } }`, nil, &r)
	if r.RetryTrace.State != "UPLOADING" || r.RetryTrace.Error != nil {
		t.Fatalf("retried: %+v", r.RetryTrace)
	}
	waitState(t, s, "broken", "READY")
}

func TestLogStreamsLive(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "fail") })
	s.WriteFile(t, "logged", "traces/kernel-1.trace", []byte("x"))
	testkit.Eventually(t, 5*time.Second, "trace seen", func() bool { return findProcessed(t, s, "logged") != nil })
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { postprocessLog(traceId: "logged") { lines } }`, nil)
	uploadRaw(t, s, "logged")
	var got []string
	for len(got) < 7 {
		var r struct{ PostprocessLog struct{ Lines []string } }
		if err := sub.Next(10*time.Second, &r); err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, r.PostprocessLog.Lines...)
	}
	for i, l := range got {
		if l != fmt.Sprintf("fakepp line %d", i+1) {
			t.Fatalf("line %d: %q", i, l)
		}
	}
}

func TestBuiltinPostprocessorEndToEnd(t *testing.T) {
	t.Parallel()
	bin := testkit.Program(t, "./cmd/cascade")
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = []string{bin, "postprocess"} })
	id := "generated"
	dir := s.TraceDir(id)
	// Generate into a staging dir, then upload file by file.
	stage := t.TempDir()
	if out, err := exec.Command(bin, "gentrace", "-kernels", "3", filepath.Join(stage, "traces")).CombinedOutput(); err != nil {
		t.Fatalf("gentrace: %v\n%s", err, out)
	}
	var list []map[string]any
	filepath.Walk(stage, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		b, _ := os.ReadFile(p)
		s.WriteFile(t, id, rel, b)
		list = append(list, map[string]any{"path": filepath.ToSlash(rel), "size": len(b)})
		return nil
	})
	meta, _ := json.Marshal(map[string]any{"files": list})
	s.WriteFile(t, id, "metadata.json", meta)
	tr := waitState(t, s, id, "READY")
	if tr.KernelCount != 3 {
		t.Fatalf("kernel count %d", tr.KernelCount)
	}
	tz, _ := filepath.Glob(filepath.Join(dir, "traces", "*.tracez"))
	if len(tz) != 3 {
		t.Fatalf("tracez files: %v", tz)
	}
}

func TestRetryUnchangedFailsAgain(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "fail") })
	uploadRaw(t, s, "still broken")
	waitState(t, s, "still broken", "FAILED")
	s.MustDo(t, `mutation { retryTrace(id: "still broken") { id } }`, nil, nil)
	tr := waitState(t, s, "still broken", "FAILED")
	if !strings.Contains(*tr.Error, "exit 3") {
		t.Fatalf("error %q", *tr.Error)
	}
}

// TestProcessedTraceStaysLive: after post-processing, changes to the trace
// still arrive from file-system events, not only from the periodic scan.
func TestProcessedTraceStaysLive(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = testkit.FakePostprocessor(t, "ok")
		c.ScanInterval = time.Minute
	})
	uploadRaw(t, s, "live")
	waitState(t, s, "live", "READY")
	s.WriteFile(t, "live", "corrected_timeline.json", []byte(`{"steps": []}`))
	s.WriteFile(t, "live", "kernel_mapping.json", []byte(`[]`))
	testkit.Eventually(t, 5*time.Second, "step timeline seen without a periodic scan", func() bool {
		var r struct {
			Trace struct{ HasStepTimeline bool }
		}
		s.MustDo(t, `{ trace(id: "live") { hasStepTimeline } }`, nil, &r)
		return r.Trace.HasStepTimeline
	})
}
