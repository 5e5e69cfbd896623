package upload_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestServerFollowsAnUpload uploads the quickstart trace with the command
// line into a running server and watches it over a websocket: it appears
// while uploading and becomes ready once metadata.json with its files
// list lands.
func TestServerFollowsAnUpload(t *testing.T) {
	s := servertest.Server(t)
	sub := s.Subscribe(t, "graphql-transport-ws",
		`subscription { traceUpdated { id state kernelCount bytes hasRealTiming hasStepTimeline } }`, nil)
	// The server registers a subscription after the subscribe message, with
	// no acknowledgement: a trace of its own seen on the subscription shows
	// it is registered before the upload starts.
	s.WriteFile(t, "registered", "metadata.json", []byte(`{}`))
	for {
		var r struct{ TraceUpdated struct{ ID string } }
		if err := sub.Next(10*time.Second, &r); err != nil {
			t.Fatalf("waiting for the subscription to be registered: %v", err)
		}
		if r.TraceUpdated.ID == "registered" {
			break
		}
	}
	var stdout, stderr bytes.Buffer
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	code := upload.Main(context.Background(), []string{src, "--run-name", "qs-upload", "--data-dir", s.DataDir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("upload exited %d: %s", code, stderr.String())
	}
	var states []string
	for {
		var r struct {
			TraceUpdated struct {
				ID                             string
				State                          string
				KernelCount                    int
				Bytes                          int64
				HasRealTiming, HasStepTimeline bool
			}
		}
		if err := sub.Next(10*time.Second, &r); err != nil {
			t.Fatalf("after %v: %v", states, err)
		}
		u := r.TraceUpdated
		if u.ID != "qs-upload" {
			continue
		}
		if len(states) == 0 || states[len(states)-1] != u.State {
			states = append(states, u.State)
		}
		if u.State == "READY" {
			if u.KernelCount != 4 || !u.HasRealTiming || !u.HasStepTimeline || u.Bytes == 0 {
				t.Fatalf("ready trace: %+v", u)
			}
			break
		}
		if u.State == "FAILED" {
			t.Fatalf("failed: %v", states)
		}
	}
	if states[0] != "UPLOADING" {
		t.Fatalf("states %v: the trace must appear while uploading", states)
	}
	if !strings.Contains(strings.Join(states, " "), "READY") {
		t.Fatalf("states %v", states)
	}
}
