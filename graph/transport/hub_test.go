package transport_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// hubServer is a GraphQL server over a broker the test publishes to.
type hubServer struct {
	*transport.Server
	broker *events.Broker
	url    string
	db     *db.DB
}

func newHubServer(t *testing.T, tokens cascade.Tokens) *hubServer {
	broker := &events.Broker{}
	d := dbtest.DB(t)
	srv := graph.NewServer(&resolvers.Resolver{DB: d, Events: broker}, transport.Options{Tokens: tokens})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &hubServer{Server: srv, broker: broker, url: strings.Replace(hs.URL, "http", "ws", 1), db: d}
}

// live is how many subscriptions are being served.
func (s *hubServer) live() int { return s.broker.Subscribers() + s.SharedSubscriptions() }

// hubClient is one websocket with one subscription on it.
type hubClient struct {
	t    *testing.T
	conn *websocket.Conn
	id   string
}

func (s *hubServer) subscribe(t *testing.T, protocol, token, id, query string, vars map[string]any) *hubClient {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{protocol}}
	conn, _, err := d.Dial(s.url, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"token": token}})
	var ack struct{ Type string }
	if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("ack: %+v %v", ack, err)
	}
	start := "subscribe"
	if protocol == "graphql-ws" {
		start = "start"
	}
	before := s.live()
	conn.WriteJSON(map[string]any{"id": id, "type": start, "payload": map[string]any{"query": query, "variables": vars}})
	testkit.Eventually(t, 10*time.Second, "subscription live", func() bool { return s.live() > before })
	return &hubClient{t: t, conn: conn, id: id}
}

// next reads the next message, which must be a result of c's
// subscription, and decodes its data into out.
func (c *hubClient) next(out any) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var m struct {
			ID, Type string
			Payload  struct {
				Data   json.RawMessage
				Errors json.RawMessage
			}
		}
		if err := c.conn.ReadJSON(&m); err != nil {
			c.t.Fatalf("subscription %q: %v", c.id, err)
		}
		if m.Type == "ka" {
			continue
		}
		if (m.Type != "next" && m.Type != "data") || m.ID != c.id || m.Payload.Errors != nil {
			c.t.Fatalf("subscription %q: got %+v", c.id, m)
		}
		if err := json.Unmarshal(m.Payload.Data, out); err != nil {
			c.t.Fatal(err)
		}
		return
	}
}

type traceUpdate struct {
	TraceUpdated struct {
		ID          string
		KernelCount int
	}
}

func publish(b *events.Broker, id string, kernels int) {
	b.Publish(cascade.TraceUpdated{Trace: cascade.Trace{ID: id, State: cascade.TraceUploading, KernelCount: kernels,
		TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, UpdatedAt: time.Now()}})
}

// TestIdenticalSubscriptionsShareOneExecution: subscriptions with the same
// document, variables and role run one execution (one subscription to
// the broker) between them, over either subprotocol, and each gets every
// event under its own id; other variables or another role run their own.
func TestIdenticalSubscriptionsShareOneExecution(t *testing.T) {
	t.Parallel()
	s := newHubServer(t, cascade.Tokens{ReadWrite: strings.Repeat("w", 32), ReadOnly: strings.Repeat("r", 32)})
	const query = `subscription($id: ID) { traceUpdated(id: $id) { id kernelCount } }`
	var shared []*hubClient
	for i, id := range []string{"1", "2", `a "quoted" id\`, "é", "5"} {
		protocol := []string{"graphql-transport-ws", "graphql-ws"}[i%2]
		shared = append(shared, s.subscribe(t, protocol, strings.Repeat("w", 32), id, query, map[string]any{"id": "t-1"}))
	}
	other := s.subscribe(t, "graphql-transport-ws", strings.Repeat("w", 32), "1", query, map[string]any{"id": "t-2"})
	readOnly := s.subscribe(t, "graphql-transport-ws", strings.Repeat("r", 32), "1", query, map[string]any{"id": "t-1"})
	if n := s.broker.Subscribers(); n != 3 {
		t.Fatalf("%d executions for 3 distinct subscriptions (7 in all)", n)
	}
	for k := 1; k <= 3; k++ {
		publish(s.broker, "t-1", k)
		publish(s.broker, "t-2", 100+k)
	}
	for _, c := range append(shared, readOnly) {
		for k := 1; k <= 3; k++ {
			var r traceUpdate
			c.next(&r)
			if r.TraceUpdated.ID != "t-1" || r.TraceUpdated.KernelCount != k {
				t.Fatalf("subscription %q: got %+v, want t-1's update %d", c.id, r, k)
			}
		}
	}
	for k := 1; k <= 3; k++ {
		var r traceUpdate
		other.next(&r)
		if r.TraceUpdated.ID != "t-2" || r.TraceUpdated.KernelCount != 100+k {
			t.Fatalf("got %+v, want t-2's update %d", r, 100+k)
		}
	}
	// The last to leave ends the execution.
	for _, c := range append(shared, readOnly, other) {
		c.conn.Close()
	}
	testkit.Eventually(t, 10*time.Second, "executions end", func() bool { return s.broker.Subscribers() == 0 })
}

// TestLateSubscriberStartsWithTheLatestState: a subscription to one trace
// that joins a running execution starts, as one of its own would, with
// the trace's state: the latest update; then it gets what follows. A
// subscription to every trace starts with nothing.
func TestLateSubscriberStartsWithTheLatestState(t *testing.T) {
	t.Parallel()
	s := newHubServer(t, cascade.Tokens{})
	tr := cascade.Trace{ID: "t-1", State: cascade.TraceUploading, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}}
	if err := s.db.SaveTrace(t.Context(), &tr); err != nil {
		t.Fatal(err)
	}
	const one = `subscription { traceUpdated(id: "t-1") { id kernelCount } }`
	const all = `subscription { traceUpdated { id kernelCount } }`
	early := s.subscribe(t, "graphql-transport-ws", "", "1", one, nil)
	earlyAll := s.subscribe(t, "graphql-transport-ws", "", "2", all, nil)
	var r traceUpdate
	early.next(&r)
	if r.TraceUpdated.KernelCount != 0 {
		t.Fatalf("first message %+v, want the stored trace", r)
	}
	for k := 1; k <= 5; k++ {
		publish(s.broker, "t-1", k)
	}
	for k := 1; k <= 5; k++ {
		early.next(&r)
		earlyAll.next(&r)
	}
	late := s.subscribe(t, "graphql-ws", "", "late", one, nil)
	lateAll := s.subscribe(t, "graphql-ws", "", "late", all, nil)
	if n := s.broker.Subscribers(); n != 2 {
		t.Fatalf("%d executions, want the late subscriptions to share the early ones' 2", n)
	}
	late.next(&r)
	if r.TraceUpdated.KernelCount != 5 {
		t.Fatalf("late subscriber's first message %+v, want the latest state (5)", r)
	}
	publish(s.broker, "t-1", 6)
	for _, c := range []*hubClient{early, late, earlyAll, lateAll} {
		c.next(&r)
		if r.TraceUpdated.KernelCount != 6 {
			t.Fatalf("subscription %q: got %+v, want update 6", c.id, r)
		}
	}
}
