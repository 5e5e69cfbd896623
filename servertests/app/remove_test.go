package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestRemoveTrace: removeTrace deletes a trace's directory from the
// bucket, and the trace and its runs go as when it is removed from the
// bucket by hand; by the time it answers, the trace is gone from the API.
// An unknown trace is NOT_FOUND; the sample, which ships with Cascade,
// is CONFLICT.
func TestRemoveTrace(t *testing.T) {
	sim := fakesim.Build(t)
	s := servertest.Server(t, func(c *app.Config) {
		c.SimCmd = []string{sim}
		c.SimConfigsDir = simconfigtest.Write(t, t.TempDir())
	})
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: "doomed"}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, s, "doomed", "READY")
	var l struct{ LaunchRun struct{ ID string } }
	s.MustDo(t, `mutation { launchRun(input: {traceId: "doomed", simConfig: "SM90_H100"}) { id } }`, nil, &l)

	removed := s.Subscribe(t, "graphql-transport-ws", `subscription { traceRemoved }`, nil)
	var r struct{ RemoveTrace string }
	s.MustDo(t, `mutation { removeTrace(id: "doomed") }`, nil, &r)
	if r.RemoveTrace != "doomed" {
		t.Errorf("removeTrace = %q, want the id", r.RemoveTrace)
	}
	var q struct {
		Trace *struct{ ID string }
		Run   *struct{ ID string }
	}
	s.Do(t, `query($run: ID!) { trace(id: "doomed") { id } run(id: $run) { id } }`, map[string]any{"run": l.LaunchRun.ID}, &q)
	if q.Trace != nil || q.Run != nil {
		t.Errorf("after removeTrace: trace %v, run %v; want both gone", q.Trace, q.Run)
	}
	var ev struct{ TraceRemoved string }
	if err := removed.Next(5*time.Second, &ev); err != nil || ev.TraceRemoved != "doomed" {
		t.Errorf("traceRemoved: %q, %v", ev.TraceRemoved, err)
	}
	des, err := os.ReadDir(s.Config.BucketDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != "sample" {
			t.Errorf("left in the bucket: %s", de.Name())
		}
	}

	for id, code := range map[string]string{"doomed": "NOT_FOUND", "sample": "CONFLICT"} {
		errs := s.Do(t, `mutation($id: ID!) { removeTrace(id: $id) }`, map[string]any{"id": id}, nil)
		if len(errs) != 1 || errs[0].Code() != code {
			t.Errorf("removeTrace(%s): %+v, want %s", id, errs, code)
		}
	}
	waitTrace(t, s, "sample", "READY")
}

// TestRemoveTraceOfTheLongestID: a trace whose id is as long as an id can
// be (cascade.MaxTraceIDLen) is removed as any other: the name its
// directory is renamed to on the way out still fits a file name.
func TestRemoveTraceOfTheLongestID(t *testing.T) {
	s := servertest.Server(t)
	id := strings.Repeat("x", cascade.MaxTraceIDLen)
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, s, id, "READY")
	s.MustDo(t, `mutation($id: ID!) { removeTrace(id: $id) }`, map[string]any{"id": id}, nil)
	if _, err := os.Stat(s.TraceDir(id)); !os.IsNotExist(err) {
		t.Errorf("the trace's directory after removeTrace: %v", err)
	}
}
