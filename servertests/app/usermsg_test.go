package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestMissingKernelTraceSaysWhatToDo: a raw kernel list naming a kernel
// trace the upload lacks fails the trace with the object as the user
// uploaded it (s3://cascade/traces/<id>/traces/...), not the server's
// path, and what to do; doing it (upload the file, Retry) makes it ready.
func TestMissingKernelTraceSaysWhatToDo(t *testing.T) {
	cascadeBin := testkit.Program(t, "./cmd/cascade")
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = []string{cascadeBin, "postprocess"}
		c.TraceFormat = "tracez"
	})
	src := rawTrace(t, 2, 0)
	kernel2, err := os.ReadFile(filepath.Join(src, "traces", "kernel-2.trace"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"traces/kernelslist", "traces/stats.csv", "traces/kernel-1.trace"} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		s.WriteFile(t, "miss", rel, data)
	}
	s.WriteFile(t, "miss", "metadata.json", []byte(`{"model": "missing kernel"}`))
	waitTrace(t, s, "miss", "FAILED")
	tr := s.TraceNow(t, "miss")
	want := "s3://cascade/traces/miss/traces/kernelslist:"
	next := "kernel trace kernel-2.trace: no such file; upload the missing kernel trace into the trace's traces/ folder, then Retry (retryTrace)"
	if tr.Error == nil || !strings.Contains(*tr.Error, want) || !strings.Contains(*tr.Error, next) || strings.Contains(*tr.Error, s.Config.DataDir) {
		t.Fatalf("error %q, want the object %q and %q, and no server path", cascadeDeref(tr.Error), want, next)
	}

	s.WriteFile(t, "miss", "traces/kernel-2.trace", kernel2)
	s.MustDo(t, `mutation { retryTrace(id: "miss") { state } }`, nil, nil)
	waitTrace(t, s, "miss", "READY")
}
