package resolvers

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
)

// TestFollowLosesNoChangeDuringItsRead commits and publishes changes while
// follow reads the row, the window a subscribe message cannot close: the
// subscription must already hold them, and deliver them after the row,
// except those the row read already supersedes.
func TestFollowLosesNoChangeDuringItsRead(t *testing.T) {
	var b events.Broker
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	trace := func(state cascade.TraceState, at time.Duration) cascade.Trace {
		return cascade.Trace{ID: "t", State: state, UpdatedAt: t0.Add(at)}
	}
	match := func(e cascade.Event) bool { return e.Key() == "trace/t" }
	convert := func(e cascade.Event) (cascade.Trace, bool) { return e.(cascade.TraceUpdated).Trace, true }
	current := func() (cascade.Trace, error) {
		// Published before the row was read, and superseded by it.
		b.Publish(cascade.TraceUpdated{Trace: trace(cascade.TraceUploading, 1)})
		row := trace(cascade.TraceProcessing, 2)
		// Committed after the read, published before follow returns.
		b.Publish(cascade.TraceUpdated{Trace: trace(cascade.TraceReady, 3)})
		return row, nil
	}
	out, err := follow(t.Context(), &b, match, convert, current, func(t cascade.Trace) time.Time { return t.UpdatedAt })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []cascade.TraceState{cascade.TraceProcessing, cascade.TraceReady} {
		select {
		case got := <-out:
			if got.State != want {
				t.Fatalf("got %s, want %s", got.State, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s", want)
		}
	}
}

// TestFollowBeforeTheRowExists: a row that does not exist yet sends
// nothing first; its first change is the first message.
func TestFollowBeforeTheRowExists(t *testing.T) {
	var b events.Broker
	match := func(e cascade.Event) bool { return e.Key() == "trace/new" }
	convert := func(e cascade.Event) (cascade.Trace, bool) { return e.(cascade.TraceUpdated).Trace, true }
	current := func() (cascade.Trace, error) {
		return cascade.Trace{}, cascade.Errorf(cascade.ENOTFOUND, "no trace new")
	}
	out, err := follow(t.Context(), &b, match, convert, current, func(t cascade.Trace) time.Time { return t.UpdatedAt })
	if err != nil {
		t.Fatal(err)
	}
	b.Publish(cascade.TraceUpdated{Trace: cascade.Trace{ID: "new", State: cascade.TraceUploading, UpdatedAt: time.Now()}})
	select {
	case got := <-out:
		if got.ID != "new" || got.State != cascade.TraceUploading {
			t.Fatalf("got %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no first change")
	}
}
