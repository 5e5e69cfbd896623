package workqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
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

func TestShutdownDrains(t *testing.T) {
	// synctest.Test fails with a deadlock if a goroutine the queue started
	// is still blocked when the test function returns.
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sawCancel, returned []string
		letReturn := make(chan struct{})
		q := workqueue.New(workqueue.Config[string]{Limit: 2, Work: func(ctx context.Context, key string) {
			<-ctx.Done()
			if cause := context.Cause(ctx); cause != context.Canceled {
				t.Errorf("%s: cause %v, want Run's context.Canceled", key, cause)
			}
			mu.Lock()
			sawCancel = append(sawCancel, key)
			mu.Unlock()
			<-letReturn // still cleaning up after the cancel
			mu.Lock()
			returned = append(returned, key)
			mu.Unlock()
		}})
		for _, k := range keys("k", 4) {
			q.Add(k)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			q.Run(ctx)
			close(done)
		}()
		synctest.Wait()
		if q.Running() != 2 {
			t.Fatalf("%d running", q.Running())
		}
		cancel()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned while its work was still returning")
		default:
		}
		mu.Lock()
		n := len(sawCancel)
		mu.Unlock()
		if n != 2 {
			t.Fatalf("%d of 2 running saw the cancel", n)
		}
		close(letReturn)
		<-done
		if len(returned) != 2 || q.Running() != 0 || q.Len() != 2 {
			t.Fatalf("returned %v, running %d, waiting %d", returned, q.Running(), q.Len())
		}
		// Nothing starts after shutdown.
		q.Add("late")
		synctest.Wait()
		if q.Running() != 0 || q.Len() != 3 {
			t.Fatalf("after shutdown: running %d, waiting %d", q.Running(), q.Len())
		}
	})
}

func TestRunOnCancelledContextStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(t)
		q := workqueue.New(workqueue.Config[string]{Work: g.work})
		q.Add("a")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		q.Run(ctx)
		if len(g.Started()) != 0 || q.Len() != 1 {
			t.Fatalf("started %v, waiting %d", g.Started(), q.Len())
		}
	})
}

func TestPanicIsRecoveredAndReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logBuf bytes.Buffer
		var mu sync.Mutex
		var panicked []string
		var perr *workqueue.PanicError
		var done []string
		q := workqueue.New(workqueue.Config[string]{
			Logger: slog.New(slog.NewTextHandler(&logBuf, nil)),
			Work: func(ctx context.Context, key string) {
				if key == "bad" {
					panic("boom")
				}
				mu.Lock()
				done = append(done, key)
				mu.Unlock()
			},
			Panicked: func(key string, err *workqueue.PanicError) {
				mu.Lock()
				panicked, perr = append(panicked, key), err
				mu.Unlock()
			},
		})
		q.Add("bad")
		q.Add("good")
		stop := run(q)
		synctest.Wait()
		stop()
		if !slices.Equal(panicked, []string{"bad"}) || !slices.Equal(done, []string{"good"}) {
			t.Fatalf("panicked %v, done %v", panicked, done)
		}
		if perr.Value != "boom" || !strings.Contains(string(perr.Stack), "workqueue_test.TestPanicIsRecoveredAndReported") || !strings.Contains(perr.Error(), "boom") {
			t.Fatalf("panic error %v, stack:\n%s", perr, perr.Stack)
		}
		if log := logBuf.String(); !strings.Contains(log, "work panicked") || !strings.Contains(log, "key=bad") {
			t.Fatalf("log: %s", log)
		}
		if q.Running() != 0 {
			t.Fatalf("%d still running", q.Running())
		}
	})
}

// TestRequeueAfterRestart plays two server lives over one stored state:
// the first stops with one key running and some waiting; the second queues
// every unfinished key in stored order and works them off, the interrupted
// one again.
func TestRequeueAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stored := keys("r", 5) // the database's queue order
		isDone := map[string]bool{}
		var mu sync.Mutex
		unfinished := func() []string {
			mu.Lock()
			defer mu.Unlock()
			var ks []string
			for _, k := range stored {
				if !isDone[k] {
					ks = append(ks, k)
				}
			}
			return ks
		}

		g := newGate(t)
		first := workqueue.New(workqueue.Config[string]{Work: func(ctx context.Context, key string) {
			g.work(ctx, key)
			if ctx.Err() == nil {
				mu.Lock()
				isDone[key] = true
				mu.Unlock()
			}
		}})
		for _, k := range unfinished() {
			first.Add(k)
		}
		stop := run(first)
		synctest.Wait()
		g.finish("r0")
		stop() // r1 is running, r2..r4 wait
		if got := g.Started(); !slices.Equal(got, []string{"r0", "r1"}) {
			t.Fatalf("first life started %v", got)
		}

		var order []string
		second := workqueue.New(workqueue.Config[string]{Work: func(ctx context.Context, key string) {
			mu.Lock()
			order = append(order, key)
			isDone[key] = true
			mu.Unlock()
		}})
		second.Add("r9") // launched while the server was starting
		for _, k := range unfinished() {
			second.Add(k)
		}
		if second.Position("r1") != 1 || second.Position("r4") != 4 {
			t.Fatalf("positions r1 %d, r4 %d", second.Position("r1"), second.Position("r4"))
		}
		stop = run(second)
		synctest.Wait()
		stop()
		if !slices.Equal(order, []string{"r9", "r1", "r2", "r3", "r4"}) || len(unfinished()) != 0 {
			t.Fatalf("second life worked %v; unfinished %v", order, unfinished())
		}
	})
}

// TestManyProducers runs on the real scheduler: many goroutines add keys
// while the queue works, and each key must be worked exactly once, with no
// goroutine of the queue left behind.
func TestManyProducers(t *testing.T) {
	const producers, perProducer, limit = 16, 500, 4
	before := runtime.NumGoroutine()
	var mu sync.Mutex
	count := map[string]int{}
	total, running, maxRunning := 0, 0, 0
	all := make(chan struct{})
	q := workqueue.New(workqueue.Config[string]{Limit: limit, Work: func(ctx context.Context, key string) {
		mu.Lock()
		running++
		maxRunning = max(maxRunning, running)
		mu.Unlock()
		runtime.Gosched()
		mu.Lock()
		running--
		count[key]++
		if total++; total == producers*perProducer {
			close(all)
		}
		mu.Unlock()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for _, k := range keys(fmt.Sprintf("p%d-", p), perProducer) {
				if !q.Add(k) {
					t.Errorf("Add(%s) = false", k)
				}
			}
		})
		if p == producers/2 {
			go func() {
				q.Run(ctx)
				close(done)
			}()
		}
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(time.Minute):
		mu.Lock()
		t.Fatalf("worked %d of %d keys; %d waiting, %d running", total, producers*perProducer, q.Len(), q.Running())
	}
	cancel()
	<-done
	for k, n := range count {
		if n != 1 {
			t.Errorf("%s worked %d times", k, n)
		}
	}
	if len(count) != producers*perProducer || maxRunning > limit || q.Len() != 0 {
		t.Fatalf("%d keys worked, at most %d at once, %d waiting", len(count), maxRunning, q.Len())
	}
	// The workers' goroutines end right after their last bookkeeping.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// BenchmarkQueue measures the queue's own cost per key: add, start, finish.
func BenchmarkQueue(b *testing.B) {
	done := make(chan struct{})
	var n int
	var mu sync.Mutex
	q := workqueue.New(workqueue.Config[int]{Limit: 4, Work: func(ctx context.Context, key int) {
		mu.Lock()
		if n++; n == b.N {
			close(done)
		}
		mu.Unlock()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		q.Run(ctx)
		close(stopped)
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		q.Add(i)
	}
	<-done
	b.StopTimer()
	cancel()
	<-stopped
}

// TestRelease: work that gives its slot back lets the next key start
// while it goes on; it still cannot run twice at once, Stop still waits
// for it, and when it returns its slot is not freed a second time.
func TestRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(t)
		var q *workqueue.Queue[string]
		q = workqueue.New(workqueue.Config[string]{Limit: 1, Work: func(ctx context.Context, key string) {
			if strings.HasPrefix(key, "big") {
				q.Release(key)
				q.Release(key) // twice: no second slot
			}
			g.work(ctx, key)
		}})
		for _, k := range []string{"big", "a", "b", "c"} {
			q.Add(k)
		}
		stop := run(q)
		defer stop()
		synctest.Wait()
		// big releases its slot before it starts its work, so a may start
		// first or second: the first two starts are big and a in either order.
		started := func(rest ...string) bool {
			got := g.Started()
			if len(got) != 2+len(rest) || !slices.Equal(got[2:], rest) {
				return false
			}
			first := slices.Clone(got[:2])
			slices.Sort(first)
			return slices.Equal(first, []string{"a", "big"})
		}
		if !started() || q.Running() != 2 {
			t.Fatalf("started %v, running %d; want big, and a in the slot big released", g.Started(), q.Running())
		}
		q.Add("big") // runs: waits for this run to return
		synctest.Wait()
		if got := g.Started(); len(got) != 2 {
			t.Fatalf("started %v", got)
		}
		g.finish("a")
		if !started("b") {
			t.Fatalf("started %v after a finished", g.Started())
		}
		g.finish("big")
		if !started("b") {
			t.Fatalf("started %v after big finished: its released slot was freed twice", g.Started())
		}
		g.finish("b")
		g.finish("c")
		if !started("b", "c", "big") {
			t.Fatalf("started %v after c finished", g.Started())
		}
		done := make(chan error, 1)
		go func() { done <- q.Stop(context.Background(), "big", nil) }()
		synctest.Wait()
		if err := <-done; err != nil || !slices.Contains(g.Cancelled(), "big") {
			t.Fatalf("Stop(big): %v, cancelled %v", err, g.Cancelled())
		}
		if q.Running() != 0 || q.Len() != 0 {
			t.Fatalf("running %d, waiting %d", q.Running(), q.Len())
		}
	})
}
