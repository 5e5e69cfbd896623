// Package quickstart puts the quickstart trace (samples/quickstart) into a
// test server's bucket, as the uploader does: the trace the run tests
// simulate.
package quickstart

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// ID is the id Upload gives the quickstart trace.
const ID = "qs"

// Upload puts samples/quickstart into s's bucket as trace ID and waits
// until it is READY. A restarted server on the same data directory has it
// already.
func Upload(t testing.TB, s *servertest.TestServer) {
	t.Helper()
	if _, err := os.Stat(s.TraceDir(ID)); err == nil {
		return
	}
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: ID}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "quickstart ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `{ trace(id: "`+ID+`") { state } }`, nil, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
}
