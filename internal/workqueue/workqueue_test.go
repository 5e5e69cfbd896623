package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cascade-sim/cascade/internal/workqueue"
)

// gate is Work that records each start and blocks until the test releases
// that start or the key's context ends. Tests run it inside a synctest
// bubble, where synctest.Wait returns once every worker is blocked in it,
// so what has started is a decision to assert on, not a race.
type gate struct {
	mu        sync.Mutex
	started   []string
	cancelled []string
	causes    []error
	inflight  map[string]int
	release   map[string]chan struct{} // one per start, made on demand
	t         *testing.T
}

func newGate(t *testing.T) *gate {
	return &gate{inflight: map[string]int{}, release: map[string]chan struct{}{}, t: t}
}

func (g *gate) work(ctx context.Context, key string) {
	g.mu.Lock()
	g.started = append(g.started, key)
	if g.inflight[key]++; g.inflight[key] > 1 {
		g.t.Errorf("%s runs twice at once", key)
	}
	ch := make(chan struct{})
	g.release[key] = ch
	g.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		g.mu.Lock()
		g.cancelled = append(g.cancelled, key)
		g.causes = append(g.causes, context.Cause(ctx))
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.inflight[key]--
	g.mu.Unlock()
}

// finish lets the running work for key return, and waits until the queue
// has reacted.
func (g *gate) finish(key string) {
	g.t.Helper()
	g.mu.Lock()
	ch, ok := g.release[key]
	delete(g.release, key)
	g.mu.Unlock()
	if !ok {
		g.t.Fatalf("%s is not running", key)
	}
	close(ch)
	synctest.Wait()
}

func (g *gate) Started() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.started)
}

func (g *gate) Cancelled() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.cancelled)
}

// run starts q.Run and returns a stop function that cancels its context
// and waits for Run to return.
func run(q *workqueue.Queue[string]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		q.Run(ctx)
		close(done)
	}()
	return func() {
		cancel()
		<-done
	}
}

func keys(prefix string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return ks
}

func TestFIFOUnderLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(t)
		q := workqueue.New(workqueue.Config[string]{Limit: 2, Work: g.work})
		ks := keys("k", 8)
		for _, k := range ks {
			if !q.Add(k) {
				t.Fatalf("Add(%s) = false", k)
			}
		}
		synctest.Wait()
		if len(g.Started()) != 0 {
			t.Fatalf("started before Run: %v", g.Started())
		}
		stop := run(q)
		defer stop()
		synctest.Wait()
		// The first two start together, so in either order.
		if got := g.Started(); !slices.Equal(slices.Sorted(slices.Values(got)), ks[:2]) || q.Running() != 2 || q.Len() != 6 {
			t.Fatalf("started %v, running %d, waiting %d", got, q.Running(), q.Len())
		}
		if p2, p7 := q.Position("k2"), q.Position("k7"); p2 != 0 || p7 != 5 {
			t.Fatalf("positions k2 %d, k7 %d", p2, p7)
		}
		// Whichever finishes, the next waiting key takes its slot.
		for i, k := range []string{"k1", "k0", "k3", "k2", "k4", "k6"} {
			g.finish(k)
			want := ks[2:min(len(ks), 3+i)]
			if got := g.Started()[2:]; !slices.Equal(got, want) {
				t.Fatalf("after %s finished: started %v, want %v", k, got, want)
			}
			if q.Running() > 2 {
				t.Fatalf("%d running, limit 2", q.Running())
			}
		}
		g.finish("k5")
		g.finish("k7")
		if q.Running() != 0 || q.Len() != 0 || q.Position("k7") != -1 {
			t.Fatalf("running %d, waiting %d after all finished", q.Running(), q.Len())
		}
	})
}

func TestAddDeduplicatesWaitingKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(t)
		q := workqueue.New(workqueue.Config[string]{Limit: 2, Work: g.work})
		if !q.Add("a") || q.Add("a") || q.Len() != 1 {
			t.Fatalf("a queued twice: %d waiting", q.Len())
		}
		stop := run(q)
		defer stop()
		synctest.Wait()
		// a runs; queued again it waits for that run, and b, queued after
		// it, takes the free slot.
		if !q.Add("a") || q.Add("a") || !q.Add("b") {
			t.Fatal("Add while a runs")
		}
		synctest.Wait()
		if got := g.Started(); !slices.Equal(got, []string{"a", "b"}) || q.Position("a") != 0 {
			t.Fatalf("started %v, a at %d", got, q.Position("a"))
		}
		g.finish("a")
		if got := g.Started(); !slices.Equal(got, []string{"a", "b", "a"}) {
			t.Fatalf("started %v", got)
		}
		g.finish("a")
		g.finish("b")
	})
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(t)
		q := workqueue.New(workqueue.Config[string]{Limit: 1, Work: g.work})
		for _, k := range []string{"a", "b", "c"} {
			q.Add(k)
		}
		stop := run(q)
		defer stop()
		synctest.Wait()

		if waiting, running := q.Cancel("b"); !waiting || running {
			t.Fatalf("Cancel(b) = %v, %v; want it waiting", waiting, running)
		}
		if q.Position("b") != -1 || q.Position("c") != 0 {
			t.Fatalf("b at %d, c at %d", q.Position("b"), q.Position("c"))
		}
		if waiting, running := q.Cancel("a"); waiting || !running {
			t.Fatalf("Cancel(a) = %v, %v; want it running", waiting, running)
		}
		synctest.Wait()
		if got, cancelled := g.Started(), g.Cancelled(); !slices.Equal(got, []string{"a", "c"}) || !slices.Equal(cancelled, []string{"a"}) {
			t.Fatalf("started %v, cancelled %v", got, cancelled)
		}
		if g.causes[0] != workqueue.ErrCancelled {
			t.Fatalf("cause %v, want ErrCancelled", g.causes[0])
		}
		for _, k := range []string{"a", "b", "nope"} {
			if waiting, running := q.Cancel(k); waiting || running {
				t.Fatalf("Cancel(%s) = %v, %v after it was gone", k, waiting, running)
			}
		}
		g.finish("c")
		if len(g.Cancelled()) != 1 {
			t.Fatalf("cancelled %v", g.Cancelled())
		}
	})
}

// TestStop: Stop cancels with the caller's cause and returns once the
// running work returned (as when a trace's removal waits for its
// post-processor, or a run's for its simulator), not before; a waiting key
// never starts; ctx bounds the wait.
func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errRemoved := errors.New("removed")
		var mu sync.Mutex
		causes := map[string]error{}
		cleanup := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
		var returned []string
		q := workqueue.New(workqueue.Config[string]{Limit: 2, Work: func(ctx context.Context, key string) {
			<-ctx.Done()
			mu.Lock()
			causes[key] = context.Cause(ctx)
			ch := cleanup[key]
			mu.Unlock()
			<-ch // cleaning up after the cancel
			mu.Lock()
			returned = append(returned, key)
			mu.Unlock()
		}})
		for _, k := range []string{"a", "b", "c"} {
			q.Add(k)
		}
		stop := run(q)
		defer stop()
		synctest.Wait()

		// A waiting key: taken off the queue, nothing to wait for.
		if err := q.Stop(context.Background(), "c", nil); err != nil || q.Position("c") != -1 || q.Len() != 0 {
			t.Fatalf("Stop(c) = %v; c at %d, %d waiting", err, q.Position("c"), q.Len())
		}
		if err := q.Stop(context.Background(), "nope", nil); err != nil {
			t.Fatalf("Stop(nope) = %v", err)
		}

		// A running key: Stop returns once its Work did.
		stopped := make(chan error, 1)
		go func() { stopped <- q.Stop(context.Background(), "a", errRemoved) }()
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Fatalf("Stop(a) returned %v while a was still cleaning up", err)
		default:
		}
		mu.Lock()
		if causes["a"] != errRemoved {
			t.Errorf("a's cause %v, want the caller's", causes["a"])
		}
		mu.Unlock()
		// Queued again while Stop waits: not waited for, and it starts
		// only after the stopped work returned.
		q.Add("a")
		close(cleanup["a"])
		if err := <-stopped; err != nil {
			t.Fatalf("Stop(a) = %v", err)
		}
		mu.Lock()
		if !slices.Equal(returned, []string{"a"}) {
			t.Errorf("returned %v when Stop(a) did", returned)
		}
		cleanup["a"] = make(chan struct{})
		mu.Unlock()
		synctest.Wait()
		if q.Running() != 2 || q.Len() != 0 {
			t.Fatalf("a queued again: running %d, waiting %d", q.Running(), q.Len())
		}

		// ctx ends the wait; the work goes on returning by itself.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := q.Stop(ctx, "b", nil); err != context.DeadlineExceeded {
			t.Fatalf("Stop(b) with a deadline = %v", err)
		}
		mu.Lock()
		if causes["b"] != workqueue.ErrCancelled {
			t.Errorf("b's cause %v, want ErrCancelled for a nil cause", causes["b"])
		}
		mu.Unlock()
		close(cleanup["b"])
		synctest.Wait()
		if q.Running() != 1 {
			t.Fatalf("%d running after b returned", q.Running())
		}
		close(cleanup["a"])
		if err := q.Stop(context.Background(), "a", nil); err != nil {
			t.Fatal(err)
		}
		if q.Running() != 0 {
			t.Fatalf("%d running", q.Running())
		}
	})
}
