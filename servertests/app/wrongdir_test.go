package app_test

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestNoTracesFolderSaysWhatToDo: a trace uploaded from its traces/
// folder (as cascade upload once allowed) has no traces/ folder. It
// failed with "stat <path>: stat <path>: no such file or directory";
// the error names the path once and says what to do.
func TestNoTracesFolderSaysWhatToDo(t *testing.T) {
	cascadeBin := testkit.Program(t, "./cmd/cascade")
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = []string{cascadeBin, "postprocess"}
		c.TraceFormat = "tracez"
	})
	s.WriteFile(t, "wrongdir", "kernelslist", []byte("kernel-1.trace\n"))
	s.WriteFile(t, "wrongdir", "kernel-1.trace", []byte("-kernel name = k\n"))
	s.WriteFile(t, "wrongdir", "metadata.json", []byte(`{"model": "wrong folder", "files": [{"path": "kernelslist", "size": 15}, {"path": "kernel-1.trace", "size": 17}]}`))
	waitTrace(t, s, "wrongdir", "FAILED")
	msg := cascadeDeref(s.TraceNow(t, "wrongdir").Error)
	path := "s3://cascade/traces/wrongdir/traces"
	if strings.Count(msg, path) != 1 {
		t.Errorf("error %q names %s %d times, want once", msg, path, strings.Count(msg, path))
	}
	if want := "the upload has no traces/ folder, so it was made from the wrong folder: upload the folder the tracer wrote, the one that holds traces/ and metadata.json"; !strings.Contains(msg, want) {
		t.Errorf("error %q\nwant it to say %q", msg, want)
	}
}
