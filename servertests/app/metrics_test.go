package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// uploadRaw writes a raw two-kernel upload (no kernelslist.g, so it is
// post-processed) with a files list, metadata.json last.
func uploadRaw(t *testing.T, s *servertest.TestServer, id string) {
	t.Helper()
	files := map[string]string{
		"traces/kernel-1.trace": "-kernel name = k\n",
		"traces/kernel-2.trace": "-kernel name = k\n",
		"traces/kernelslist":    "kernel-1.trace\nkernel-2.trace\n",
		"traces/stats.csv":      "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\nkernel-1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\nkernel-2.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\n",
	}
	var list []map[string]any
	for p, d := range files {
		s.WriteFile(t, id, p, []byte(d))
		list = append(list, map[string]any{"path": p, "size": len(d)})
	}
	meta, _ := json.Marshal(map[string]any{"files": list})
	s.WriteFile(t, id, "metadata.json", meta)
}

func waitTrace(t *testing.T, s *servertest.TestServer, id, state string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "trace "+id+" "+state, func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
		return r.Trace != nil && r.Trace.State == state
	})
}

// TestMetricsFollowTheServer: /metrics counts traces and runs by state,
// times the post-processor, the run and the scans, and follows the open
// subscriptions, as a post-processed trace and a run go through a real
// server.
func TestMetricsFollowTheServer(t *testing.T) {
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		scrape := func() map[string]float64 { return testkit.Scrape(t, s.URL+"/metrics") }
		m := scrape()
		for k, v := range map[string]float64{
			`cascade_traces{state="ready"}`:                            1, // the sample
			`cascade_traces{state="processing"}`:                       0,
			`cascade_runs{state="queued"}`:                             0,
			`cascade_postprocess_queue_length`:                         0,
			`cascade_postprocess_running`:                              0,
			`cascade_postprocess_duration_seconds_count{outcome="ok"}`: 0,
			`cascade_run_duration_seconds_count{state="succeeded"}`:    0,
			`cascade_subscribers`:                                      0,
			`cascade_subscribers_dropped_total`:                        0,
			`cascade_websocket_clients_dropped_total`:                  0,
		} {
			if got, ok := m[k]; !ok || got != v {
				t.Errorf("at start: %s = %v (present %v), want %v", k, got, ok, v)
			}
		}
		if _, ok := m["cascade_s3_uploads_in_flight"]; ok {
			t.Error("cascade_s3_uploads_in_flight served without an S3 endpoint")
		}

		sub := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { id state } }`, nil)
		if n := scrape()["cascade_subscribers"]; n != 1 {
			t.Errorf("subscribers with one open: %v", n)
		}
		uploadRaw(t, s, "raw")
		waitTrace(t, s, "raw", "READY")
		if n := scrape()[`cascade_postprocess_duration_seconds_count{outcome="ok"}`]; n != 1 {
			t.Errorf("post-processors timed after one: %v", n)
		}

		src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: "qs"}); err != nil {
			t.Fatal(err)
		}
		waitTrace(t, s, "qs", "READY")
		var l struct{ LaunchRun struct{ ID string } }
		s.MustDo(t, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { id } }`, nil, &l)
		testkit.Eventually(t, 30*time.Second, "run succeeded", func() bool {
			var r struct{ Run struct{ State string } }
			s.MustDo(t, `query($id: ID!) { run(id: $id) { state } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
			return r.Run.State == "SUCCEEDED"
		})
		m = scrape()
		for k, v := range map[string]float64{
			`cascade_traces{state="ready"}`:                         3,
			`cascade_runs{state="succeeded"}`:                       1,
			`cascade_runs{state="queued"}`:                          0,
			`cascade_run_duration_seconds_count{state="succeeded"}`: 1,
		} {
			if got := m[k]; got != v {
				t.Errorf("after the run: %s = %v, want %v", k, got, v)
			}
		}
		if m["cascade_scan_duration_seconds_count"] < 1 {
			t.Errorf("no periodic scan timed: %v", m["cascade_scan_duration_seconds_count"])
		}
		sub.Conn.Close()
		testkit.Eventually(t, 5*time.Second, "no subscriber once it left", func() bool { return scrape()["cascade_subscribers"] == 0 })
	}, func(c *app.Config) {
		c.PostprocessCmd = testkit.FakePostprocessor(t, "ok")
		c.SimCmd = []string{sim}
		c.SimConfigsDir = cfgDir
	})
}

// TestMetricsPostprocessQueue: with one post-processor at once, a second
// trace waits in the queue /metrics shows.
func TestMetricsPostprocessQueue(t *testing.T) {
	s := servertest.Server(t, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "slow") })
	for _, id := range []string{"first", "second"} {
		uploadRaw(t, s, id)
	}
	testkit.Eventually(t, 20*time.Second, "one post-processing, one queued", func() bool {
		m := testkit.Scrape(t, s.URL+"/metrics")
		return m["cascade_postprocess_running"] == 1 && m["cascade_postprocess_queue_length"] == 1 && m[`cascade_traces{state="processing"}`] == 2
	})
	for _, id := range []string{"first", "second"} {
		if err := os.RemoveAll(s.TraceDir(id)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 20*time.Second, "nothing queued or running once the traces are gone", func() bool {
		m := testkit.Scrape(t, s.URL+"/metrics")
		return m["cascade_postprocess_running"] == 0 && m["cascade_postprocess_queue_length"] == 0
	})
}

// TestMetricsDroppedSubscribers: a subscriber the server completes for
// falling behind is counted.
func TestMetricsDroppedSubscribers(t *testing.T) {
	zero := 0
	s := servertest.Server(t, func(c *app.Config) { c.SubscriberQueue = &zero })
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { id state } }`, nil)
	s.WriteFile(t, "new", "traces/kernel-1.trace", []byte("x"))
	var msg any
	if err := sub.Next(10*time.Second, &msg); !errors.Is(err, servertest.ErrCompleted) {
		t.Fatalf("subscription with a zero queue: %v, %v; want it completed", msg, err)
	}
	m := testkit.Scrape(t, s.URL+"/metrics")
	if got := m["cascade_subscribers_dropped_total"]; got != 1 {
		t.Fatalf("dropped subscribers %v, want 1 (%s)", got, fmt.Sprint(m["cascade_subscribers"]))
	}
}
