package metrics_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/metrics"
	"github.com/cascade-sim/cascade/testkit"
)

// TestRegistry serves levels read at scrape time and events pushed through
// the hooks, every known state and outcome at zero from the start.
func TestRegistry(t *testing.T) {
	var logs testkit.SyncBuffer
	r := metrics.New(slog.New(slog.NewTextHandler(&logs, nil)))
	var mu sync.Mutex
	traces := map[cascade.TraceState]int64{cascade.TraceReady: 3, cascade.TraceProcessing: 1}
	var traceErr error
	queued, subs, inFlight := 2, 5, int64(1)
	r.Watch(metrics.Sources{
		TraceStates: func(context.Context) (map[cascade.TraceState]int64, error) {
			mu.Lock()
			defer mu.Unlock()
			return traces, traceErr
		},
		RunStates: func(context.Context) (map[cascade.RunState]int64, error) {
			return map[cascade.RunState]int64{cascade.RunQueued: 4}, nil
		},
		PostprocessQueued:  func() int { return queued },
		PostprocessRunning: func() int { return 1 },
		Subscribers:        func() int { return subs },
		SubscribersDropped: func() int64 { return 6 },
		ClientsDropped:     func() int64 { return 7 },
		UploadsInFlight:    func() int64 { return inFlight },
	})
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()

	started := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	finished := started.Add(90 * time.Minute)
	r.Scanned(20 * time.Millisecond)
	r.Scanned(30 * time.Millisecond)
	r.Postprocessed(3*time.Second, true)
	r.Postprocessed(time.Second, false)
	r.RunEnded(cascade.Run{State: cascade.RunSucceeded, StartedAt: &started, FinishedAt: &finished})
	r.RunEnded(cascade.Run{State: cascade.RunCancelled, FinishedAt: &finished}) // cancelled while queued: not a run that ran
	r.SlurmPollFailed(errors.New("squeue: timed out"))
	r.SlurmPollFailed(errors.New("squeue: timed out"))

	got := testkit.Scrape(t, srv.URL)
	want := map[string]float64{
		`cascade_traces{state="ready"}`:                                3,
		`cascade_traces{state="processing"}`:                           1,
		`cascade_traces{state="uploading"}`:                            0,
		`cascade_traces{state="failed"}`:                               0,
		`cascade_runs{state="queued"}`:                                 4,
		`cascade_runs{state="running"}`:                                0,
		`cascade_runs{state="cancelled"}`:                              0,
		`cascade_postprocess_queue_length`:                             2,
		`cascade_postprocess_running`:                                  1,
		`cascade_subscribers`:                                          5,
		`cascade_subscribers_dropped_total`:                            6,
		`cascade_websocket_clients_dropped_total`:                      7,
		`cascade_s3_uploads_in_flight`:                                 1,
		`cascade_scan_duration_seconds_count`:                          2,
		`cascade_scan_duration_seconds_sum`:                            0.05,
		`cascade_postprocess_duration_seconds_count{outcome="ok"}`:     1,
		`cascade_postprocess_duration_seconds_sum{outcome="ok"}`:       3,
		`cascade_postprocess_duration_seconds_count{outcome="failed"}`: 1,
		`cascade_run_duration_seconds_count{state="succeeded"}`:        1,
		`cascade_run_duration_seconds_sum{state="succeeded"}`:          5400,
		`cascade_run_duration_seconds_count{state="failed"}`:           0,
		`cascade_run_duration_seconds_count{state="cancelled"}`:        0,
		`cascade_slurm_poll_errors_total`:                              2,
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok || (g-v) > 1e-9 || (v-g) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no go_goroutines: the Go runtime's metrics are missing")
	}

	// Levels are read at each scrape.
	mu.Lock()
	traces = map[cascade.TraceState]int64{cascade.TraceReady: 4}
	mu.Unlock()
	if g := testkit.Scrape(t, srv.URL)[`cascade_traces{state="ready"}`]; g != 4 {
		t.Errorf("second scrape: ready traces %v, want 4", g)
	}

	// A count that fails leaves its metric out and the rest served.
	mu.Lock()
	traceErr = errors.New("database is closed")
	mu.Unlock()
	got = testkit.Scrape(t, srv.URL)
	if _, ok := got[`cascade_traces{state="ready"}`]; ok {
		t.Error("cascade_traces served although its count failed")
	}
	if got[`cascade_runs{state="queued"}`] != 4 || got[`cascade_subscribers`] != 5 {
		t.Errorf("the other metrics after a failed count: %v", got)
	}
	if !strings.Contains(logs.String(), "database is closed") {
		t.Errorf("the failed count was not logged:\n%s", logs.String())
	}
}
