package servertests_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestEmptyDirectoryIsNotATrace: a directory holding nothing, or only
// dotfiles and empty directories, is not a trace; it becomes one when its
// first file lands, and stops being one when its last file goes.
func TestEmptyDirectoryIsNotATrace(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := watch(t, s)
	removed := s.Subscribe(t, "graphql-transport-ws", `subscription { traceRemoved }`, nil)
	for _, dir := range []string{"empty", "dotfiles/.hidden", "dotfiles/traces"} {
		if err := os.MkdirAll(filepath.Join(s.TraceDir(dir)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(s.TraceDir("dotfiles"), ".rclone_temp_put_metadata.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(s.TraceDir("dotfiles"), ".hidden", "x"), []byte("x"), 0o644)
	settle(t, s, sub, "marker")
	for _, id := range []string{"empty", "dotfiles"} {
		if tr := find(t, s, id); tr != nil {
			t.Errorf("%s is a trace: %+v", id, tr)
		}
	}
	var r struct{ Traces struct{ TotalCount int } }
	s.MustDo(t, `{ traces { totalCount } }`, nil, &r)
	if r.Traces.TotalCount != 2 { // marker and the sample
		t.Errorf("%d traces, want 2", r.Traces.TotalCount)
	}

	// The first file makes it a trace, and its first update holds that file.
	s.WriteFile(t, "empty", "traces/kernel-1.trace", make([]byte, 10))
	tr := waitFor(t, sub, "empty", 5*time.Second, "first sight", func(trace) bool { return true })
	if tr.State != "UPLOADING" || tr.Bytes != 10 || tr.KernelCount != 1 {
		t.Fatalf("first sight: %+v", tr)
	}
	// Its last file gone (a dotfile left behind), it is no trace any more.
	s.WriteFile(t, "empty", "traces/.rclone_temp_put_kernel-2.trace", []byte("x"))
	os.Remove(filepath.Join(s.TraceDir("empty"), "traces", "kernel-1.trace"))
	var gone struct{ TraceRemoved string }
	if err := removed.Next(5*time.Second, &gone); err != nil || gone.TraceRemoved != "empty" {
		t.Fatalf("traceRemoved: %+v %v", gone, err)
	}
}

// settle returns once the scanner has acted on every file-system event
// before the call: it writes two files into trace id one after the other
// and waits for each to be published. Events are handled in order, so the
// scan that published the first file began after every earlier event was
// queued, and the second one began after that scan ended.
func settle(t *testing.T, s *servertest.TestServer, sub *servertest.Subscription, id string) {
	t.Helper()
	for i := range 2 {
		s.WriteFile(t, id, fmt.Sprintf("traces/kernel-%d.trace", i+1), []byte("x"))
		waitFor(t, sub, id, 5*time.Second, "settled", func(tr trace) bool { return tr.KernelCount == i+1 })
	}
}

// TestUploadNamedLikeTheSample: a trace uploaded as "sample" takes the id;
// the seeded sample moves to ".sample" (a name no bucket directory can
// have) and says why, and takes its id back when the upload goes. Nothing
// is hidden, across a restart too.
func TestUploadNamedLikeTheSample(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var log testkit.SyncBuffer
			cfg := func(c *app.Config) {
				c.DataDir, c.DatabaseURL = dir, u
				c.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(&log, tlog{t}), nil))
			}
			s := servertest.Server(t, cfg)
			sub := watch(t, s)
			files := perContextTrace()
			for _, f := range files {
				s.WriteFile(t, "sample", f.path, []byte(f.data))
			}
			s.WriteFile(t, "sample", "metadata.json", []byte(metadata(t, map[string]any{"model": "mine", "files": filesList(files)})))
			waitFor(t, sub, "sample", 5*time.Second, "the upload, ready", func(tr trace) bool { return tr.State == "READY" && !tr.Sample })
			check := func(s *servertest.TestServer) {
				t.Helper()
				up, seeded := query(t, s, "sample"), query(t, s, ".sample")
				if up.Sample || up.Model == nil || *up.Model != "mine" || up.KernelCount != 2 {
					t.Errorf("the upload: %+v", up)
				}
				if !seeded.Sample || seeded.State != "READY" || len(seeded.Warnings) != 1 || !strings.Contains(seeded.Warnings[0], `uploaded trace named "sample"`) {
					t.Errorf("the seeded sample: %+v", seeded)
				}
				if n, _ := kernels(t, s, ".sample"); n == 0 {
					t.Errorf("the seeded sample lost its kernels")
				}
				if n, _ := kernels(t, s, "sample"); n != 2 {
					t.Errorf("the upload has %d kernels, want 2", n)
				}
			}
			check(s)
			if !strings.Contains(log.String(), `level=WARN msg="an uploaded trace takes the sample's id; the seeded sample moves" component=scanner trace=sample sample=.sample`) {
				t.Errorf("the log does not say so:\n%s", log.String())
			}
			s.Close()

			s2 := servertest.Server(t, cfg)
			check(s2)
			sub2 := watch(t, s2)
			os.RemoveAll(s2.TraceDir("sample"))
			waitFor(t, sub2, "sample", 5*time.Second, "the sample back", func(tr trace) bool { return tr.Sample })
			if tr := find(t, s2, ".sample"); tr != nil {
				t.Fatalf(".sample is still there: %+v", tr)
			}
			if tr := query(t, s2, "sample"); len(tr.Warnings) != 0 || tr.State != "READY" {
				t.Fatalf("the sample back: %+v", tr)
			}
			// A directory named sample that comes and goes, empty, takes
			// nothing away.
			if err := os.Mkdir(s2.TraceDir("sample"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Remove(s2.TraceDir("sample"))
			settle(t, s2, sub2, "marker")
			if tr := find(t, s2, "sample"); tr == nil || !tr.Sample {
				t.Fatalf("the sample after an empty directory came and went: %+v", tr)
			}
		})
	}
}

// tlog sends a log to the test's log, shown on failure.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) { w.t.Log(strings.TrimSpace(string(p))); return len(p), nil }

// TestStatusFailedAfterTheUpload: metadata.json rewritten with status
// "failed" fails a trace that is processing or ready, and the error says
// where it came from.
func TestStatusFailedAfterTheUpload(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = testkit.FakePostprocessor(t, "slow", "--delay=1h")
		c.ScanInterval = time.Minute // file-system events alone must do it
	})
	sub := watch(t, s)
	cascadeUpload(t, s, rawTrace(t, "m", []int{1}, 1), "processing")
	waitFor(t, sub, "processing", 5*time.Second, "PROCESSING", state("PROCESSING"))
	s.WriteFile(t, "processing", "metadata.json", []byte(`{"status": "failed", "error": "tracer crashed: SIGSEGV"}`))
	tr := waitFor(t, sub, "processing", 5*time.Second, "FAILED", state("FAILED"))
	if want := `metadata.json: status "failed": tracer crashed: SIGSEGV`; tr.Error == nil || *tr.Error != want {
		t.Fatalf("error %v, want %q", tr.Error, want)
	}
	// Its post-processor (whose command line names the trace) is stopped.
	testkit.Eventually(t, 5*time.Second, "post-processor stopped", func() bool {
		out, _ := exec.Command("pgrep", "-f", s.TraceDir("processing")).Output()
		return len(out) == 0
	})

	files := perContextTrace() // holds kernelslist.g: ready without the post-processor
	for _, f := range files {
		s.WriteFile(t, "ready", f.path, []byte(f.data))
	}
	s.WriteFile(t, "ready", "metadata.json", []byte(metadata(t, map[string]any{"files": filesList(files)})))
	waitFor(t, sub, "ready", 5*time.Second, "READY", state("READY"))
	s.WriteFile(t, "ready", "metadata.json", []byte(metadata(t, map[string]any{"status": "failed", "files": filesList(files)})))
	tr = waitFor(t, sub, "ready", 5*time.Second, "FAILED", state("FAILED"))
	if want := `metadata.json: status "failed"`; tr.Error == nil || *tr.Error != want {
		t.Fatalf("error %v, want %q", tr.Error, want)
	}
	if n, _ := kernels(t, s, "ready"); n != 0 {
		t.Fatalf("a failed re-upload keeps %d kernels of the old one", n)
	}
}
