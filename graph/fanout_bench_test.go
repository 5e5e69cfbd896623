package graph_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/internal/testutil"
	"github.com/cascade-sim/cascade/resolvers"
)

// fanoutClient is one real websocket subscriber to traceUpdated. It
// checks that each trace's updates come in order and records how long
// each took from publish (the event's updatedAt) to arrival.
type fanoutClient struct {
	conn *websocket.Conn
	err  error
	last map[string]int // trace id -> last kernelCount seen
	got  int
	lat  []time.Duration
}

func (c *fanoutClient) read(want int, done *sync.WaitGroup) {
	defer done.Done()
	for c.got < want {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.err = err
			return
		}
		var m struct {
			Type    string
			Payload struct {
				Data struct {
					TraceUpdated struct {
						ID          string
						KernelCount int
						UpdatedAt   time.Time
					}
				}
			}
		}
		if err := json.Unmarshal(data, &m); err != nil {
			c.err = err
			return
		}
		if m.Type != "next" {
			continue
		}
		u := m.Payload.Data.TraceUpdated
		c.lat = append(c.lat, time.Since(u.UpdatedAt))
		if last, ok := c.last[u.ID]; ok && u.KernelCount <= last {
			c.err = &orderError{u.ID, last, u.KernelCount}
			return
		}
		c.last[u.ID] = u.KernelCount
		c.got++
	}
}

type orderError struct {
	id         string
	last, next int
}

func (e *orderError) Error() string {
	return "trace " + e.id + ": update " + itoa(e.next) + " after " + itoa(e.last)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// BenchmarkFanout publishes b.N trace updates (over 10 traces) at 100 a
// second to 1,000 subscribers of traceUpdated over real websockets, and
// checks every subscriber got every update, in order per trace. It
// reports the publish-to-arrival latency's p50 and p99, the process's CPU
// time (server and clients) per delivery, and the rate the updates really
// went out at.
func BenchmarkFanout(b *testing.B) {
	const subscribers, rate, traces = 1000, 100, 10
	broker := &events.Broker{}
	srv := graph.NewServer(&resolvers.Resolver{DB: testutil.DB(b), Events: broker}, graph.Options{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	url := strings.Replace(hs.URL, "http", "ws", 1)
	clients := make([]*fanoutClient, subscribers)
	for i := range clients {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, _, err := d.Dial(url, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		conn.WriteJSON(map[string]any{"type": "connection_init"})
		var ack struct{ Type string }
		if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
			b.Fatalf("ack: %v", err)
		}
		conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": `subscription { traceUpdated { id state kernelCount bytes updatedAt } }`}})
		clients[i] = &fanoutClient{conn: conn, last: map[string]int{}}
	}
	testutil.Eventually(b, 30*time.Second, "all subscribed", func() bool { return broker.Subscribers() == subscribers })
	var done sync.WaitGroup
	for _, c := range clients {
		done.Add(1)
		go c.read(b.N, &done)
	}
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Second / rate)
	for i := range b.N {
		<-tick.C
		broker.Publish(events.TraceUpdated{Trace: cascade.Trace{
			ID: "t-" + itoa(i%traces), State: cascade.TraceUploading, KernelCount: i, Bytes: int64(i) * 1000,
			TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, UpdatedAt: time.Now(),
		}})
	}
	tick.Stop()
	published := time.Since(start)
	done.Wait()
	b.StopTimer()
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	var all []time.Duration
	for i, c := range clients {
		if c.err != nil || c.got != b.N {
			b.Fatalf("subscriber %d: %d of %d updates: %v", i, c.got, b.N, c.err)
		}
		all = append(all, c.lat...)
	}
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "cpu-µs/delivery")
	// A CPU-starved process cannot keep the ticker's pace: say how fast the
	// updates really went out.
	b.ReportMetric(float64(b.N)/published.Seconds(), "updates/s")
	reportLatencies(b, all)
}
