package servertests_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// churnCycle is one client's life: connect, init, subscribe to the sample
// trace (whose first message, its current state, shows the subscription
// runs), and leave in one of three ways: its TCP connection cut, a close
// frame, or completing the subscription first.
func churnCycle(wsURL string, i int) error {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial(wsURL, nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		return err
	}
	read := func(want string) error {
		for {
			var m wsMessage
			if err := c.ReadJSON(&m); err != nil {
				return fmt.Errorf("waiting for %s: %w", want, err)
			}
			if m.Type == want {
				return nil
			}
		}
	}
	if err := read("connection_ack"); err != nil {
		return err
	}
	err = c.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { traceUpdated(id: "sample") { id state } }`}})
	if err != nil {
		return err
	}
	if err := read("next"); err != nil {
		return err
	}
	switch i % 3 {
	case 0: // a dropped network
		return c.UnderlyingConn().Close()
	case 1: // a closed tab
		return c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	default: // a client that unsubscribes, then leaves
		if err := c.WriteJSON(map[string]any{"id": "1", "type": "complete"}); err != nil {
			return err
		}
		return c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
}

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestChurnLeavesNothingBehind runs 10,000 connect, subscribe and drop
// cycles against the real server, some at once, and checks that every
// subscription ended and the process holds no more goroutines and about
// no more heap than before them.
func TestChurnLeavesNothingBehind(t *testing.T) {
	// Not parallel: the counts are the whole process's.
	const cycles, workers = 10_000, 8
	s := servertest.Server(t)
	wsURL := strings.Replace(s.URL, "http", "ws", 1) + "/graphql"
	subs := s.Subscribers()
	run := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					if err := churnCycle(wsURL, i); err != nil {
						errs <- fmt.Errorf("cycle %d: %w", i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, "every subscription ended", func() bool { return s.Subscribers() == subs })
	}
	// Warm up: pools, caches and the database's connections fill once.
	run(300)
	goroutines, heap := runtime.NumGoroutine(), heapAfterGC()

	start := time.Now()
	run(cycles)
	elapsed := time.Since(start)

	// The last connections' goroutines end shortly after their clients.
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); g > goroutines+2 && time.Now().Before(deadline); g = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	if g > goroutines+2 {
		t.Errorf("%d goroutines after %d cycles, %d before", g, cycles, goroutines)
	}
	after := heapAfterGC()
	t.Logf("%d cycles in %v: goroutines %d -> %d, heap %d kB -> %d kB", cycles, elapsed.Round(time.Millisecond), goroutines, g, heap>>10, after>>10)
	// 4 MiB over 10,000 cycles is 420 bytes each: a leaked connection,
	// subscription or goroutine costs more than that.
	if after > heap+4<<20 {
		t.Errorf("heap grew from %d kB to %d kB over %d cycles", heap>>10, after>>10, cycles)
	}
	if n := s.DroppedClients(); n != 0 {
		t.Errorf("%d clients dropped as slow readers; every client read what it asked for", n)
	}
	var r struct{ Trace struct{ ID string } }
	s.MustDo(t, `{ trace(id: "sample") { id } }`, nil, &r)
	if r.Trace.ID != "sample" {
		t.Fatalf("the server no longer answers: %+v", r)
	}
}
