package runs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// hanging makes the stand-in simulator wait an hour before its first
// kernel's statistics: a run ends only when it is stopped.
func hanging(t *testing.T) func(*app.Config) {
	sim := fakesim.Build(t)
	return func(c *app.Config) { c.SimCmd = []string{"env", "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h", sim} }
}

// held makes the stand-in simulator wait before each kernel's statistics
// until release is called (FAKESIM_STEP): a run stays RUNNING for as long
// as the test needs, on a machine of any speed or load, then every kernel
// of every run goes on. The test holds the named pipe open, so the lines
// release writes stay there for simulators that start later.
func held(t *testing.T) (configure func(*app.Config), release func()) {
	step := filepath.Join(t.TempDir(), "step")
	if err := syscall.Mkfifo(step, 0o600); err != nil {
		t.Fatal(err)
	}
	pipe, err := os.OpenFile(step, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipe.Close() })
	configure = func(c *app.Config) { c.SimCmd = append([]string{"env", fakesim.EnvStep + "=" + step}, c.SimCmd...) }
	release = func() {
		if _, err := pipe.WriteString(strings.Repeat("\n", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	return configure, release
}

// simulators lists the stand-in simulators working on this server's
// traces: their command line holds the data directory.
func simulators(s *servertest.TestServer) []string {
	// A run's simulator runs in its work directory (the server's probe
	// of the simulator at start, in work/probe, runs no run).
	var runs []string
	for _, l := range testkit.ProcsIn(filepath.Join(s.Config.DataDir, "work", "runs")) {
		if strings.Contains(l, "accel-sim.out -trace ") {
			runs = append(runs, l)
		}
	}
	return runs
}

// TestCancelRacesStart: a cancelRun that lands while its run is starting
// (the worker moving it from QUEUED to RUNNING) is never lost. Runs whose
// cancel was lost would wait an hour in RUNNING.
func TestCancelRacesStart(t *testing.T) {
	t.Parallel()
	s := server(t, "slow", hanging(t), func(c *app.Config) { c.RunConcurrency = 2 })
	const n = 200
	ids := make([]string, n)
	for i := range n {
		r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
		ids[i] = r.ID
		s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, map[string]any{"id": r.ID}, nil)
	}
	var states map[string]string
	defer func() {
		if t.Failed() {
			t.Logf("not cancelled: %v", states)
		}
	}()
	testkit.Eventually(t, 60*time.Second, "every run cancelled", func() bool {
		var r struct {
			Runs struct{ Nodes []struct{ ID, State string } }
		}
		s.MustDo(t, fmt.Sprintf(`{ runs(traceId: %q, first: %d) { nodes { id state } } }`, quickstartID, n), nil, &r)
		states = map[string]string{}
		for _, node := range r.Runs.Nodes {
			if node.State != "CANCELLED" {
				states[node.ID] = node.State
			}
		}
		return len(r.Runs.Nodes) == n && len(states) == 0
	})
	testkit.Eventually(t, 10*time.Second, "no simulator left", func() bool { return len(simulators(s)) == 0 })
}

// TestTraceRemovalEndsItsRuns: removing a trace's directory stops its
// running simulator, cancels its queued runs, deletes every run of the
// trace (finished ones too) with its work directory, and tells
// runRemoved subscribers about each one.
func TestTraceRemovalEndsItsRuns(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			s := server(t, "ok", func(c *app.Config) { c.DatabaseURL = u })
			done := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			waitRun(t, s, done.ID, "SUCCEEDED")
			// The next runs hang: one runs, one waits its turn.
			s.Close()
			s = server(t, "ok", func(c *app.Config) { c.DatabaseURL, c.DataDir = u, s.DataDir }, hanging(t))
			running := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			queued := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			waitRun(t, s, running.ID, "RUNNING")
			testkit.Eventually(t, 10*time.Second, "simulator started", func() bool { return len(simulators(s)) > 0 })

			removed := s.Subscribe(t, "graphql-transport-ws", `subscription { runRemoved(traceId: "qs") }`, nil)
			everyRemoved := s.Subscribe(t, "graphql-ws", `subscription { runRemoved }`, nil)
			oneRemoved := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { runRemoved(id: $id) }`, map[string]any{"id": running.ID})
			if err := os.RemoveAll(s.TraceDir(quickstartID)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for len(got) < 3 {
				var ev struct{ RunRemoved string }
				if err := removed.Next(30*time.Second, &ev); err != nil {
					t.Fatalf("after %v: %v", got, err)
				}
				got = append(got, ev.RunRemoved)
			}
			want := []string{done.ID, running.ID, queued.ID}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("runRemoved %v, want %v", got, want)
			}
			var ev struct{ RunRemoved string }
			if err := everyRemoved.Next(10*time.Second, &ev); err != nil || !slices.Contains(want, ev.RunRemoved) {
				t.Fatalf("unfiltered runRemoved: %q %v", ev.RunRemoved, err)
			}
			if err := oneRemoved.Next(10*time.Second, &ev); err != nil || ev.RunRemoved != running.ID {
				t.Fatalf("runRemoved(id:) %q %v, want %s", ev.RunRemoved, err, running.ID)
			}
			// The simulator is gone by the time its run is reported removed.
			if left := simulators(s); len(left) > 0 {
				t.Fatalf("simulator outlived its run: %v", left)
			}
			for _, id := range want {
				var r struct{ Run *struct{ ID string } }
				s.MustDo(t, `query($id: ID!) { run(id: $id) { id } }`, map[string]any{"id": id}, &r)
				if r.Run != nil {
					t.Fatalf("run %s survives its trace", id)
				}
				if _, err := os.Stat(filepath.Join(s.Config.DataDir, "work", "runs", id)); !os.IsNotExist(err) {
					t.Fatalf("work directory of run %s: %v", id, err)
				}
			}
		})
	}
}
