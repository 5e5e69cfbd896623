package events_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/testkit"
)

func update(id string, kernels int) cascade.Event {
	return cascade.TraceUpdated{Trace: cascade.Trace{ID: id, KernelCount: kernels}}
}

func TestFastSubscribersMissNothing(t *testing.T) {
	var b events.Broker
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 20000
	subs := make([]*events.Subscription, 4)
	for i := range subs {
		subs[i] = b.Subscribe(ctx, nil)
	}
	done := make(chan error, len(subs))
	for _, s := range subs {
		go func() {
			for i := range n {
				e, err := s.Next(ctx)
				if err != nil {
					done <- err
					return
				}
				if got := e.(cascade.TraceUpdated).Trace.ID; got != fmt.Sprint(i) {
					done <- fmt.Errorf("event %d: got trace %s", i, got)
					return
				}
			}
			done <- nil
		}()
	}
	for i := range n {
		b.Publish(update(fmt.Sprint(i), i)) // distinct keys: nothing may coalesce
	}
	for range subs {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestFastSubscriberSeesEveryStateOfOneTrace(t *testing.T) {
	var b events.Broker
	ctx := t.Context()
	s := b.Subscribe(ctx, nil)
	// A trace passing through its states faster than anyone reads: below
	// CoalesceAt queued events, every one is delivered, in order.
	for i := range events.CoalesceAt {
		b.Publish(update("one", i))
	}
	for i := range events.CoalesceAt {
		e, err := s.Next(ctx)
		if err != nil || e.(cascade.TraceUpdated).Trace.KernelCount != i {
			t.Fatalf("event %d: %v %v", i, e, err)
		}
	}
}

func TestStalledSubscriberNeverBlocks(t *testing.T) {
	var b events.Broker
	ctx := t.Context()
	stalled := b.Subscribe(ctx, nil) // never reads
	live := b.Subscribe(ctx, nil)
	// A publish that waited for the stalled subscriber would never return:
	// the loop ending is the proof (its speed is BenchmarkPublish's).
	for i := range 200000 {
		b.Publish(update("same", i))
	}
	// Each kept the first CoalesceAt-1 events and, in the last place, the
	// newest snapshot: never more than CoalesceAt events of memory.
	for _, s := range []*events.Subscription{stalled, live} {
		var last cascade.Event
		for range events.CoalesceAt {
			e, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			last = e
		}
		if got := last.(cascade.TraceUpdated).Trace.KernelCount; got != 199999 {
			t.Fatalf("last event has %d, want the newest", got)
		}
	}
}

func TestOverflowClosesOnlyTheLaggard(t *testing.T) {
	var b events.Broker
	ctx := t.Context()
	stalled := b.Subscribe(ctx, nil)
	live := b.Subscribe(ctx, func(e cascade.Event) bool { return e.Key() == "trace/watched" })
	for i := range events.MaxPending + 1 {
		b.Publish(update(fmt.Sprint(i), i))
	}
	if _, err := stalled.Next(ctx); !errors.Is(err, events.ErrTooSlow) {
		t.Fatalf("stalled: %v", err)
	}
	if b.Subscribers() != 1 || b.Dropped() != 1 {
		t.Fatalf("subscribers %d, dropped %d; want 1 and 1", b.Subscribers(), b.Dropped())
	}
	b.Publish(update("watched", 1))
	b.Publish(update("more", 1))
	if b.Dropped() != 1 {
		t.Fatalf("dropped %d after more events; a closed subscription counts once", b.Dropped())
	}
	if e, err := live.Next(ctx); err != nil || e.Key() != "trace/watched" {
		t.Fatalf("live: %v %v", e, err)
	}
}

func TestCancelEndsSubscription(t *testing.T) {
	var b events.Broker
	ctx, cancel := context.WithCancel(context.Background())
	s := b.Subscribe(ctx, nil)
	errc := make(chan error)
	go func() { _, err := s.Next(ctx); errc <- err }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// AfterFunc unsubscribes on its own goroutine.
	testkit.Eventually(t, time.Second, "unsubscribed", func() bool { return b.Subscribers() == 0 })
}

func TestNewBrokerSizesQueues(t *testing.T) {
	ctx := t.Context()
	t.Run("two", func(t *testing.T) {
		b := events.NewBroker(2)
		s := b.Subscribe(ctx, nil)
		b.Publish(update("a", 1))
		b.Publish(update("b", 1))
		b.Publish(update("b", 2)) // full: replaces b's waiting snapshot
		for _, want := range []string{"a/1", "b/2"} {
			e, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tr := e.(cascade.TraceUpdated).Trace; fmt.Sprintf("%s/%d", tr.ID, tr.KernelCount) != want {
				t.Fatalf("got %s/%d, want %s", tr.ID, tr.KernelCount, want)
			}
		}
		b.Publish(update("a", 2))
		b.Publish(update("b", 3))
		b.Publish(update("c", 1)) // a third key waiting: closed
		if _, err := s.Next(ctx); !errors.Is(err, events.ErrTooSlow) {
			t.Fatalf("third key: %v, want ErrTooSlow", err)
		}
		if n := b.Subscribers(); n != 0 {
			t.Fatalf("%d subscribers left", n)
		}
	})
	t.Run("zero closes at the first event", func(t *testing.T) {
		b := events.NewBroker(0)
		s := b.Subscribe(ctx, nil)
		b.Publish(update("a", 1))
		if _, err := s.Next(ctx); !errors.Is(err, events.ErrTooSlow) {
			t.Fatalf("got %v, want ErrTooSlow", err)
		}
	})
}

// BenchmarkPublish publishes to four subscribers that never read, the
// worst case: every publish coalesces into a full queue.
func BenchmarkPublish(b *testing.B) {
	var br events.Broker
	for range 4 {
		br.Subscribe(b.Context(), nil)
	}
	e := update("same", 1)
	for b.Loop() {
		br.Publish(e)
	}
}

// TestDropIsCountedBeforeTheSubscriberHearsOfIt: whoever sees a
// subscription end for falling behind (and tells its client, who may then
// scrape /metrics) finds it already counted in Dropped. It was counted
// after the subscriber was woken, so a quick subscriber could see the end
// first (TestMetricsDroppedSubscribers, under load: "dropped subscribers
// 0, want 1").
func TestDropIsCountedBeforeTheSubscriberHearsOfIt(t *testing.T) {
	ctx := context.Background()
	for i := range 2000 {
		b := events.NewBroker(0)
		s := b.Subscribe(ctx, nil)
		seen := make(chan int64)
		go func() {
			_, err := s.Next(ctx)
			if !errors.Is(err, events.ErrTooSlow) {
				t.Errorf("Next: %v, want ErrTooSlow", err)
			}
			seen <- b.Dropped()
		}()
		b.Publish(update("t", 1))
		if n := <-seen; n != 1 {
			t.Fatalf("iteration %d: the subscriber saw its end with Dropped() = %d, want 1", i, n)
		}
	}
}
