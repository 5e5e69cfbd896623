package events

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cascade-sim/cascade"
)

// A subscriber's queue delivers every event in order while it holds
// fewer than CoalesceAt; past that, a new event replaces the queued one of
// its key (a lagging subscriber keeps the newest snapshot of each trace),
// and a subscriber with MaxPending distinct keys waiting counts as stuck and
// is closed; its client resubscribes and refetches. These are the sizes of
// the zero Broker; [NewBroker] sets others.
const (
	CoalesceAt = 256
	MaxPending = 10000
)

// ErrTooSlow is returned by [Subscription.Next] once the subscription was
// closed for falling more than MaxPending keys behind.
var ErrTooSlow = errors.New("events: subscriber too slow, closed")

// Broker fans events out to subscribers without ever blocking the
// publisher. It is safe for concurrent use; the zero value is ready, with
// queues of MaxPending.
type Broker struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}

	sized      bool // set by NewBroker; else the default sizes
	maxPending int

	dropped atomic.Int64 // subscriptions closed for falling behind
}

// NewBroker returns a broker whose subscribers may each have up to
// maxPending distinct keys waiting (queues deliver every event while they
// hold fewer than min(CoalesceAt, maxPending)). With 0, a subscriber is
// closed at the first event it has not taken yet: a setting for tests of
// clients' resubscription.
func NewBroker(maxPending int) *Broker {
	return &Broker{sized: true, maxPending: max(0, maxPending)}
}

// Publish hands e to every subscriber whose filter accepts it. It never
// waits for a subscriber.
func (b *Broker) Publish(e cascade.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.match == nil || s.match(e) {
			if !s.offer(e, &b.dropped) {
				delete(b.subs, s)
			}
		}
	}
}

// Subscribe returns a subscription to the events match accepts (all, when
// match is nil). It ends when ctx is done; match runs on the publisher's
// goroutine and must be quick.
func (b *Broker) Subscribe(ctx context.Context, match func(cascade.Event) bool) *Subscription {
	s := &Subscription{match: match, wake: make(chan struct{}, 1), latest: map[string]int{}, coalesceAt: CoalesceAt, maxPending: MaxPending}
	if b.sized {
		s.coalesceAt, s.maxPending = min(CoalesceAt, b.maxPending), b.maxPending
	}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		delete(b.subs, s)
		b.mu.Unlock()
	})
	return s
}

// Subscribers returns how many subscriptions are open.
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Dropped returns how many subscriptions the broker closed for falling
// more than its queue size behind (their Next returned ErrTooSlow).
func (b *Broker) Dropped() int64 { return b.dropped.Load() }

// Subscription is one subscriber's queue. Next is meant for one goroutine.
type Subscription struct {
	match                  func(cascade.Event) bool
	wake                   chan struct{}
	coalesceAt, maxPending int

	mu      sync.Mutex
	queue   []cascade.Event
	head    int            // absolute index of queue[0]
	latest  map[string]int // key -> absolute index of its newest queued event
	dropped bool
}

// offer queues e, or closes the subscription for falling behind and
// counts it in dropped: counted before the close is visible, so whoever
// sees the subscription end (and tells a client, who may read /metrics)
// finds it counted.
func (s *Subscription) offer(e cascade.Event, dropped *atomic.Int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped {
		return false
	}
	k := e.Key()
	if i, ok := s.latest[k]; ok && len(s.queue) >= s.coalesceAt {
		s.queue[i-s.head] = e
		return true
	}
	if len(s.queue) >= s.maxPending {
		dropped.Add(1)
		s.dropped = true
		s.queue, s.latest = nil, nil
		s.signal()
		return false
	}
	s.queue = append(s.queue, e)
	s.latest[k] = s.head + len(s.queue) - 1
	s.signal()
	return true
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next waits for the next event. It returns ctx's error when ctx is done,
// and ErrTooSlow when the broker closed the subscription.
func (s *Subscription) Next(ctx context.Context) (cascade.Event, error) {
	for {
		s.mu.Lock()
		if s.dropped {
			s.mu.Unlock()
			return nil, ErrTooSlow
		}
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if k := e.Key(); s.latest[k] == s.head {
				delete(s.latest, k)
			}
			s.head++
			s.mu.Unlock()
			return e, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
