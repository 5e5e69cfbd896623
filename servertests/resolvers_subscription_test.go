package servertests_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

var protocols = []string{"graphql-transport-ws", "graphql-ws"}

type traceMsg struct {
	TraceUpdated struct {
		ID, State   string
		KernelCount int
		Sample      bool
	}
}

// TestTraceUpdatedStartsWithTheTrace subscribes, as a script does, to a
// trace that will not change again: the first message is its state.
func TestTraceUpdatedStartsWithTheTrace(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			sub := s.SubscribeNow(t, p, `subscription { traceUpdated(id: "sample") { id state kernelCount sample } }`, nil)
			var r traceMsg
			if err := sub.Next(5*time.Second, &r); err != nil {
				t.Fatalf("first message: %v", err)
			}
			if u := r.TraceUpdated; u.ID != "sample" || u.State != "READY" || !u.Sample || u.KernelCount == 0 {
				t.Fatalf("first message %+v, want the sample trace, ready", u)
			}
		})
	}
}

// TestSubscribeThenUploadAtOnce is the script of docs/api.md: subscribe to
// a trace, start `cascade upload` at once without waiting for anything,
// and follow the trace to READY. Whenever the server registers the
// subscription, the script learns the state then and every later change.
func TestSubscribeThenUploadAtOnce(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	for i := range 6 {
		p := protocols[i%2]
		id := fmt.Sprintf("qs-%d", i)
		sub := s.SubscribeNow(t, p, `subscription($id: ID) { traceUpdated(id: $id) { id state kernelCount } }`, map[string]any{"id": id})
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
			t.Fatal(err)
		}
		var states []string
		for len(states) == 0 || states[len(states)-1] != "READY" {
			var r traceMsg
			if err := sub.Next(10*time.Second, &r); err != nil {
				t.Fatalf("%s over %s, after %v: %v", id, p, states, err)
			}
			if r.TraceUpdated.ID != id || r.TraceUpdated.State == "FAILED" {
				t.Fatalf("%s: got %+v", id, r.TraceUpdated)
			}
			states = append(states, r.TraceUpdated.State)
		}
	}
}

// TestLaggingSubscriberIsCompleted: a subscriber the broker closes for
// falling behind gets the protocol's complete, which tells its client to
// resubscribe and refetch; a queue of 0 closes each at its first change.
func TestLaggingSubscriberIsCompleted(t *testing.T) {
	t.Parallel()
	zero := 0
	s := servertest.Server(t, func(c *app.Config) { c.SubscriberQueue = &zero })
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			all := s.Subscribe(t, p, `subscription { traceUpdated { id state } }`, nil)
			var r traceMsg
			s.WriteFile(t, "lag-"+p, "traces/kernel-1.trace", []byte("x"))
			if err := all.Next(5*time.Second, &r); !errors.Is(err, servertest.ErrCompleted) {
				t.Fatalf("all traces: got %+v, %v; want complete", r, err)
			}
		})
	}
}
