package workqueue_test

import (
	"bytes"
	"context"
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
