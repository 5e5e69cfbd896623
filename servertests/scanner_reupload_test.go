package servertests_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// rawTrace writes a raw upload (no kernelslist.g) of the given kernels to
// a local directory, as the profiler leaves it before `cascade upload`.
// Kernel k has grid k*grid.
func rawTrace(t *testing.T, model string, kernels []int, grid int) string {
	t.Helper()
	dir := t.TempDir()
	list := "MemcpyHtoD,0x00007f0000000000,4096\n"
	stats := statsHeader
	files := map[string]string{}
	for _, k := range kernels {
		name := fmt.Sprintf("kernel-%d-ctx_0x1.trace", k)
		files["traces/"+name] = "-kernel name = k\n"
		list += name + "\n"
		stats += statsRow(name, k*grid, 32, int64(k))
	}
	files["traces/kernelslist_ctx_0x1"] = list
	files["traces/stats_ctx_0x1"] = stats
	files["metadata.json"] = fmt.Sprintf(`{"model": %q, "gpu": "NVIDIA H100 80GB HBM3"}`, model)
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cascadeUpload runs the real `cascade upload` binary into s's bucket.
func cascadeUpload(t *testing.T, s *servertest.TestServer, src, runName string, extra ...string) {
	t.Helper()
	args := append([]string{"upload", src, "--run-name", runName, "--data-dir", s.DataDir}, extra...)
	out, err := exec.Command(testkit.Program(t, "./cmd/cascade"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cascade %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

type kernel struct {
	KernelID int
	Grid     struct{ X int }
}

func kernels(t *testing.T, s *servertest.TestServer, id string) (int, []kernel) {
	t.Helper()
	var r struct {
		Trace struct {
			Kernels struct {
				TotalCount int
				Nodes      []kernel
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { kernels(first: 100) { totalCount nodes { kernelId grid { x } } } } }`, map[string]any{"id": id}, &r)
	return r.Trace.Kernels.TotalCount, r.Trace.Kernels.Nodes
}

// states reads updates of trace id until one satisfies until, and returns
// the states seen on the way, repeats collapsed, with that last update.
func states(t *testing.T, sub *servertest.Subscription, id string, until func(trace) bool) ([]string, trace) {
	t.Helper()
	var seen []string
	for {
		tr := waitFor(t, sub, id, 20*time.Second, "any update", func(trace) bool { return true })
		if len(seen) == 0 || seen[len(seen)-1] != tr.State {
			seen = append(seen, tr.State)
		}
		if until(tr) {
			return seen, tr
		}
		if len(seen) > 8 {
			t.Fatalf("trace %q: states %v", id, seen)
		}
	}
}

// TestReuploadStartsOver uploads a raw trace with the real `cascade
// upload`, lets it be post-processed, then uploads a changed trace over it
// with --force: it goes back to uploading, is post-processed again, and
// its kernels are the new upload's only. The post-processor's own writes
// never start it over.
func TestReuploadStartsOver(t *testing.T) {
	t.Parallel()
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		sub := watch(t, s)
		id := "re-upload"
		cascadeUpload(t, s, rawTrace(t, "first", []int{1, 2}, 7), id)
		// A busy scanner may see the first upload whole: no states asserted.
		tr := waitFor(t, sub, id, 20*time.Second, "READY", state("READY"))
		if *tr.Model != "first" || tr.KernelCount != 2 {
			t.Fatalf("first upload: %+v", tr)
		}
		if n, _ := kernels(t, s, id); n != 2 {
			t.Fatalf("first upload: %d kernels", n)
		}

		cascadeUpload(t, s, rawTrace(t, "second", []int{3, 4, 5}, 9), id, "--force")
		// Starting over is always published as uploading first.
		seen, tr := states(t, sub, id, func(tr trace) bool { return tr.State == "READY" && tr.Model != nil && *tr.Model == "second" })
		if !slices.Equal(seen, []string{"READY", "UPLOADING", "PROCESSING", "READY"}) && !slices.Equal(seen, []string{"UPLOADING", "PROCESSING", "READY"}) {
			t.Fatalf("re-upload: states %v", seen)
		}
		if *tr.Model != "second" || tr.KernelCount != 3 || tr.Error != nil {
			t.Fatalf("re-uploaded: %+v", tr)
		}
		n, ks := kernels(t, s, id)
		if n != 3 {
			t.Fatalf("re-uploaded: %d kernels %+v, want the new upload's 3", n, ks)
		}
		for _, k := range ks {
			if k.KernelID < 3 || k.Grid.X != 9*k.KernelID {
				t.Fatalf("kernel %+v is not the new upload's: %+v", k, ks)
			}
		}

		// The post-processor wrote traces/kernelslist.g before READY; a later
		// change must find the trace still ready, not started over.
		s.WriteFile(t, id, "corrected_timeline.json", []byte(`{"steps": []}`))
		s.WriteFile(t, id, "kernel_mapping.json", []byte(`[]`))
		seen, _ = states(t, sub, id, func(tr trace) bool { return tr.HasStepTimeline })
		if !slices.Equal(seen, []string{"READY"}) {
			t.Fatalf("after post-processing: states %v; the post-processor's writes started the trace over", seen)
		}
	}, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
}

// TestReuploadThatOnlyAddsFiles: an uploader that never deletes (a bucket
// sync) leaves the kernelslist.g the post-processor wrote for the first
// upload; that is not the new upload's, so it is post-processed again,
// not skipped on the stale list.
func TestReuploadThatOnlyAddsFiles(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
	sub := watch(t, s)
	id := "synced"
	cascadeUpload(t, s, rawTrace(t, "first", []int{1, 2}, 7), id)
	waitFor(t, sub, id, 20*time.Second, "READY", state("READY"))

	src := rawTrace(t, "second", []int{3, 4, 5}, 9)
	var files []uploadFile
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "metadata.json" {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		files = append(files, uploadFile{filepath.ToSlash(rel), string(b)})
		return nil
	})
	for _, f := range files {
		s.WriteFile(t, id, f.path, []byte(f.data))
	}
	s.WriteFile(t, id, "metadata.json", []byte(metadata(t, map[string]any{"model": "second", "files": filesList(files)})))
	seen, tr := states(t, sub, id, func(tr trace) bool { return tr.State == "READY" && tr.Model != nil && *tr.Model == "second" })
	if !slices.Contains(seen, "PROCESSING") || tr.KernelCount != 3 {
		t.Fatalf("states %v, %+v: the first upload's kernelslist.g was taken", seen, tr)
	}
	list, _ := os.ReadFile(filepath.Join(s.TraceDir(id), "traces", "kernelslist.g"))
	if !strings.Contains(string(list), "kernel-5-ctx_0x1.traceg") {
		t.Fatalf("kernelslist.g was not written again:\n%s", list)
	}
}

// TestReuploadOfFailedTrace: a trace the profiler marked failed starts over
// when it is uploaded again; no retryTrace needed.
func TestReuploadOfFailedTrace(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
	sub := watch(t, s)
	id := "failed-then-fixed"
	s.WriteFile(t, id, "traces/kernel-1-ctx_0x1.trace", []byte("-kernel name = k\n"))
	s.WriteFile(t, id, "metadata.json", []byte(`{"status": "failed", "error": "CUDA OOM in layer 3"}`))
	tr := waitFor(t, sub, id, 5*time.Second, "FAILED", state("FAILED"))
	if want := `metadata.json: status "failed": CUDA OOM in layer 3`; tr.Error == nil || *tr.Error != want {
		t.Fatalf("error %v, want %q", tr.Error, want)
	}
	// The profiler's uploader sends the trace again, metadata.json last.
	cascadeUpload(t, s, rawTrace(t, "fixed", []int{1}, 3), id, "--force")
	seen, tr := states(t, sub, id, state("READY"))
	if !slices.Equal(seen, []string{"UPLOADING", "PROCESSING", "READY"}) || *tr.Model != "fixed" || tr.Error != nil {
		t.Fatalf("re-upload of a failed trace: states %v, %+v", seen, tr)
	}
}

// TestReadyTraceLosesKernelsList: a ready trace whose traces/kernelslist.g
// disappears cannot launch runs and is post-processed again.
func TestReadyTraceLosesKernelsList(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = testkit.FakePostprocessor(t, "slow", "--delay=500ms")
		c.ScanInterval = time.Minute // file-system events alone must do it
	})
	sub := watch(t, s)
	id := "lost-list"
	cascadeUpload(t, s, rawTrace(t, "m", []int{1, 2}, 5), id)
	waitFor(t, sub, id, 20*time.Second, "READY", state("READY"))
	if err := os.Remove(filepath.Join(s.TraceDir(id), "traces", "kernelslist.g")); err != nil {
		t.Fatal(err)
	}
	tr := waitFor(t, sub, id, 5*time.Second, "leaves READY", func(tr trace) bool { return tr.State != "READY" })
	if tr.State != "UPLOADING" {
		t.Fatalf("without kernelslist.g: %+v", tr)
	}
	waitFor(t, sub, id, 5*time.Second, "PROCESSING", state("PROCESSING"))
	// The slow post-processor holds it in processing: no run can launch.
	errs := s.Do(t, `mutation($id: ID!) { launchRun(input: {traceId: $id, simConfig: "SM90_H100"}) { id } }`, map[string]any{"id": id}, nil)
	if len(errs) != 1 || errs[0].Code() != "CONFLICT" {
		t.Fatalf("launchRun while processing again: %+v", errs)
	}
	tr = waitFor(t, sub, id, 20*time.Second, "READY again", state("READY"))
	if n, _ := kernels(t, s, id); n != 2 || tr.KernelCount != 2 {
		t.Fatalf("ready again: %d kernels, %+v", n, tr)
	}
	if _, err := os.Stat(filepath.Join(s.TraceDir(id), "traces", "kernelslist.g")); err != nil {
		t.Fatalf("not post-processed again: %v", err)
	}
}

// TestDataFileChangedAfterReady (issue 32): a raw kernel trace of a ready
// trace is overwritten with other content of the same size, as `aws s3
// cp` of a changed kernel-1.trace with the same metadata.json does. The
// trace is not left ready on the old processed files: it starts over, is
// post-processed again, says why in its warnings, and a run launched
// before says which content it simulated (its traceSum).
func TestDataFileChangedAfterReady(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
	sub := watch(t, s)
	id := "changed-data"
	cascadeUpload(t, s, rawTrace(t, "m", []int{1, 2}, 7), id)
	waitFor(t, sub, id, 20*time.Second, "READY", state("READY"))
	list := filepath.Join(s.TraceDir(id), "traces", "kernelslist.g")
	before, err := os.Stat(list)
	if err != nil {
		t.Fatal(err)
	}

	raw := "traces/kernel-1-ctx_0x1.trace"
	old, err := os.ReadFile(filepath.Join(s.TraceDir(id), filepath.FromSlash(raw)))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteFile(t, id, raw, []byte(strings.ToUpper(string(old)))) // the same size: metadata.json's files list still holds
	seen, tr := states(t, sub, id, func(tr trace) bool { return tr.State == "READY" && len(tr.Warnings) > 0 })
	// Updates of the first READY (the walk after post-processing) may
	// come first.
	if !slices.Equal(seen, []string{"READY", "UPLOADING", "PROCESSING", "READY"}) && !slices.Equal(seen, []string{"UPLOADING", "PROCESSING", "READY"}) {
		t.Fatalf("after %s changed: states %v, want it post-processed again", raw, seen)
	}
	want := "data files changed after the upload completed (" + raw + "); post-processed again"
	if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], want) {
		t.Fatalf("warnings %q, want one starting %q", tr.Warnings, want)
	}
	after, err := os.Stat(list)
	if err != nil || !after.ModTime().After(before.ModTime()) {
		t.Fatalf("kernelslist.g not written again: %v, %v, %v", before.ModTime(), after, err)
	}
	if n, _ := kernels(t, s, id); n != 2 {
		t.Fatalf("%d kernels after post-processing again", n)
	}
	// Still ready on the next scans: the post-processor's writes are no
	// change of the upload's data.
	time.Sleep(3 * s.Config.ScanInterval)
	var r struct{ Trace struct{ State string } }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
	if r.Trace.State != "READY" {
		t.Fatalf("after post-processing again: %s", r.Trace.State)
	}
}

// TestDataFileChangedWhileProcessing: a data file changed while the
// trace is post-processed starts it over at once: its post-processor
// (here one that takes its time) is stopped, and the trace is never
// READY on the earlier files; it was, for a moment, before.
func TestDataFileChangedWhileProcessing(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "slow", "--delay=4s") })
	sub := watch(t, s)
	id := "changed-in-processing"
	cascadeUpload(t, s, rawTrace(t, "m", []int{1, 2}, 7), id)
	waitFor(t, sub, id, 20*time.Second, "PROCESSING", state("PROCESSING"))

	raw := "traces/kernel-1-ctx_0x1.trace"
	old, err := os.ReadFile(filepath.Join(s.TraceDir(id), filepath.FromSlash(raw)))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteFile(t, id, raw, []byte(strings.ToUpper(string(old)))) // the same size: metadata.json's files list still holds
	seen, tr := states(t, sub, id, func(tr trace) bool { return tr.State == "READY" })
	if !slices.Equal(seen, []string{"PROCESSING", "UPLOADING", "PROCESSING", "READY"}) && !slices.Equal(seen, []string{"UPLOADING", "PROCESSING", "READY"}) {
		t.Fatalf("after %s changed during processing: states %v, want it started over before any READY", raw, seen)
	}
	want := "data files changed after the upload completed, during post-processing (" + raw + "); post-processed again"
	if len(tr.Warnings) == 0 || tr.Warnings[0] != want {
		t.Fatalf("warnings %q, want %q first", tr.Warnings, want)
	}
	if n, _ := kernels(t, s, id); n != 2 {
		t.Fatalf("%d kernels after post-processing again", n)
	}
}
