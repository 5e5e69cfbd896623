package workqueue

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// Config configures a Queue.
type Config[K comparable] struct {
	// Limit is how many keys are worked on at once; 1 when 0 or less.
	Limit int
	// Work does the work for one key. Its context ends when the key is
	// cancelled or the queue shuts down; Work should then return soon.
	Work func(ctx context.Context, key K)
	// Panicked, if set, is told about a Work call that panicked, after it
	// was recovered; the queue goes on with the next key.
	Panicked func(key K, err *PanicError)
	// Logger, if set, logs each recovered panic with its stack.
	Logger *slog.Logger
}

// ErrCancelled is the cause ([context.Cause]) of a Work call's context
// ended by [Queue.Cancel]; a shutdown ends it with the cause of Run's
// context instead, so Work can tell a user's cancel from a stopping server.
var ErrCancelled = errors.New("workqueue: cancelled")

// PanicError is a panic recovered from a Work call.
type PanicError struct {
	Value any    // what Work panicked with
	Stack []byte // the stack of the panicking goroutine
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("workqueue: work panicked: %v", e.Value) }

// Queue holds keys waiting for work and runs Work for them: first queued,
// first started, at most Config.Limit at once, and never two calls for one
// key at the same time (a key queued again while it runs starts after that
// run returned, and later keys may start first). Its methods are safe for
// concurrent use; Run is called once.
type Queue[K comparable] struct {
	cfg Config[K]

	mu      sync.Mutex
	waiting *list.List          // of K, in queue order
	queued  map[K]*list.Element // the waiting keys' elements
	running map[K]running       // the running keys' work
	freed   int                 // running keys that gave their slot back (Release)
	base    context.Context     // Run's context; nil before Run
	stopped bool                // Run's context ended: start nothing more
	wg      sync.WaitGroup      // one per running Work call
}

// New returns a Queue that holds keys until Run starts working on them.
func New[K comparable](cfg Config[K]) *Queue[K] {
	if cfg.Limit <= 0 {
		cfg.Limit = 1
	}
	return &Queue[K]{cfg: cfg, waiting: list.New(), queued: map[K]*list.Element{}, running: map[K]running{}}
}

// running is one Work call under way: cancel ends its context; done, made
// when a Stop waits for it (most calls have none), is closed once it
// returned.
type running struct {
	cancel   context.CancelCauseFunc
	done     chan struct{}
	released bool // Release gave its slot to the next key
}

// Add queues key at the end and reports whether it did: a key that is
// already waiting keeps its place and is not queued twice. A key whose
// work is running is queued again. Keys may be added before Run (a restart
// adds the stored ones, in their stored order) and while it runs.
func (q *Queue[K]) Add(key K) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.queued[key]; ok {
		return false
	}
	q.queued[key] = q.waiting.PushBack(key)
	q.startLocked()
	return true
}

// Cancel takes key off the queue and cancels the context of its running
// work, with cause [ErrCancelled]. It reports whether key was waiting (it
// then never starts) and whether it was running (its Work has been asked to
// stop, and may still be returning).
func (q *Queue[K]) Cancel(key K) (wasWaiting, wasRunning bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	wasWaiting, done := q.cancelLocked(key, ErrCancelled)
	return wasWaiting, done != nil
}

// Stop cancels key as Cancel does, with cause (ErrCancelled when nil), so
// that its Work can tell why, and then waits until the Work call that was
// running, if any, has returned: whatever it was doing with key is over.
// It returns ctx's error if ctx ends first. Work queued for key again
// meanwhile is not waited for. Work must not Stop its own key.
func (q *Queue[K]) Stop(ctx context.Context, key K, cause error) error {
	if cause == nil {
		cause = ErrCancelled
	}
	q.mu.Lock()
	_, done := q.cancelLocked(key, cause)
	q.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancelLocked takes key off the queue and cancels its running work with
// cause. It reports whether key was waiting and returns the done channel
// of its running work, nil when none runs.
func (q *Queue[K]) cancelLocked(key K, cause error) (wasWaiting bool, done <-chan struct{}) {
	if e, ok := q.queued[key]; ok {
		q.waiting.Remove(e)
		delete(q.queued, key)
		wasWaiting = true
	}
	if r, ok := q.running[key]; ok {
		r.cancel(cause)
		if r.done == nil {
			r.done = make(chan struct{})
			q.running[key] = r
		}
		done = r.done
	}
	return wasWaiting, done
}

// Release gives the slot of key's running work to the next waiting key:
// the work goes on, and Cancel and Stop still reach it, but it no longer
// counts towards Config.Limit. Work calls it for its own key when what
// is left of it should not keep others waiting (a long database write
// after the part the limit is for). It does nothing when key is not
// running or already released its slot.
func (q *Queue[K]) Release(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	r, ok := q.running[key]
	if !ok || r.released {
		return
	}
	r.released = true
	q.running[key] = r
	q.freed++
	q.startLocked()
}

// Len is the number of keys waiting.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.Len()
}

// Running is the number of Work calls under way, released ones included.
func (q *Queue[K]) Running() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.running)
}

// Position is key's place among the waiting keys, 0 for the next to
// start, or -1 when it is not waiting.
func (q *Queue[K]) Position(key K) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.queued[key]; !ok {
		return -1
	}
	i := 0
	for e := q.waiting.Front(); e.Value.(K) != key; e = e.Next() {
		i++
	}
	return i
}

// Run works on queued keys until ctx ends. It then starts nothing more,
// lets the running Work calls see their contexts cancelled, and returns
// once every one of them has returned. Keys still waiting stay queued but
// are never started: the caller's stored state queues them again on the
// next start.
func (q *Queue[K]) Run(ctx context.Context) {
	q.mu.Lock()
	if q.base != nil {
		q.mu.Unlock()
		panic("workqueue: Run called twice")
	}
	q.base = ctx
	q.startLocked()
	q.mu.Unlock()

	<-ctx.Done()
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.wg.Wait()
}

// startLocked starts work for waiting keys while there is room. A key that
// is running is passed over and keeps its place.
func (q *Queue[K]) startLocked() {
	if q.base == nil || q.stopped || q.base.Err() != nil {
		return
	}
	for e := q.waiting.Front(); e != nil && len(q.running)-q.freed < q.cfg.Limit; {
		next := e.Next()
		key := e.Value.(K)
		if _, busy := q.running[key]; !busy {
			q.waiting.Remove(e)
			delete(q.queued, key)
			ctx, cancel := context.WithCancelCause(q.base)
			q.running[key] = running{cancel: cancel}
			q.wg.Add(1)
			go q.work(ctx, key, cancel)
		}
		e = next
	}
}

// work runs Work for key, recovering a panic, then frees its slot for the
// next waiting key.
func (q *Queue[K]) work(ctx context.Context, key K, cancel context.CancelCauseFunc) {
	defer q.wg.Done()
	defer func() {
		cancel(nil)
		q.mu.Lock()
		r := q.running[key]
		if r.done != nil {
			close(r.done)
		}
		if r.released {
			q.freed--
		}
		delete(q.running, key)
		q.startLocked()
		q.mu.Unlock()
	}()
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		perr := &PanicError{Value: v, Stack: debug.Stack()}
		if q.cfg.Logger != nil {
			q.cfg.Logger.Error("work panicked", "key", key, "panic", v, "stack", string(perr.Stack))
		}
		if q.cfg.Panicked != nil {
			q.cfg.Panicked(key, perr)
		}
	}()
	q.cfg.Work(ctx, key)
}
