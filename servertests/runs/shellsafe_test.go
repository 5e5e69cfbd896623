package runs_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/upload"
)

// TestTraceNamesTheShellActsOn: Accel-Sim opens each kernel trace with
// popen("cat <list's directory>/<name>"), and the stand-in does what the
// shell makes of such a path too. A trace whose name holds a ';' was run
// as shell code by the simulator, and one with a blank failed ("cat:
// .../with: No such file") though READY (QA). The simulator is now given
// the list by a path of the run's own: both simulate, and nothing runs.
// A processed kernelslist.g naming a trace the shell would act on fails
// its trace, naming the line.
func TestTraceNamesTheShellActsOn(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	for _, id := range []string{"inj;touch PWNED;", "with space", `q'uote$(touch PWNED2)`} {
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
			t.Fatalf("upload %q: %v", id, err)
		}
		testkit.Eventually(t, 20*time.Second, id+" ready", func() bool {
			var r struct{ Trace *struct{ State string } }
			s.MustDo(t, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
			return r.Trace != nil && r.Trace.State == "READY"
		})
		r := waitRun(t, s, launch(t, s, map[string]any{"traceId": id, "simConfig": simconfigtest.H100}).ID, "SUCCEEDED", "FAILED")
		if r.State != "SUCCEEDED" || len(r.Kernels) != 4 {
			t.Errorf("trace %q: run %s with %d kernels (%v), want SUCCEEDED with 4", id, r.State, len(r.Kernels), cascadeDeref(r.Error))
		}
	}
	filepath.WalkDir(s.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "PWNED" || d.Name() == "PWNED2") {
			t.Errorf("the shell ran a trace's name: %s", p)
		}
		return nil
	})

	// An upload whose processed list names a kernel trace the shell acts
	// on (it skips post-processing).
	bad := filepath.Join(t.TempDir(), "bad-list")
	if err := os.CopyFS(bad, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(bad, "traces", "kernelslist.g")
	data, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, append(data, []byte("kernel-9.traceg;touch PWNED3\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	// cascade upload refuses it, naming the line ...
	_, err = upload.Upload(context.Background(), upload.Options{Source: bad, PrefixDir: s.Config.BucketDir()})
	if want := `traces/kernelslist.g: line 9: kernel trace "kernel-9.traceg;touch PWNED3" holds ";"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("cascade upload: %v, want an error with %s", err, want)
	}
	// ... and the server fails a trace copied in by other means.
	dest := s.TraceDir("bad-list")
	if err := os.CopyFS(filepath.Join(dest, "traces"), os.DirFS(filepath.Join(bad, "traces"))); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(bad, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "metadata.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	var msg string
	testkit.Eventually(t, 20*time.Second, "bad-list failed", func() bool {
		var r struct {
			Trace *struct {
				State string
				Error *string
			}
		}
		s.MustDo(t, `{ trace(id: "bad-list") { state error } }`, nil, &r)
		if r.Trace != nil && r.Trace.Error != nil {
			msg = *r.Trace.Error
		}
		return r.Trace != nil && r.Trace.State == "FAILED"
	})
	if want := `kernel trace "kernel-9.traceg;touch PWNED3" holds ";"`; !strings.Contains(msg, want) {
		t.Errorf("error %q, want it to say %s", msg, want)
	}
}
