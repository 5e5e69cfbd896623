package servertests_test

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

func TestLegacyGraphQLWSProtocol(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := s.Subscribe(t, "graphql-ws", `subscription($id: ID) { traceUpdated(id: $id) { id state kernelCount } }`, map[string]any{"id": "legacy"})
	s.WriteFile(t, "other", "traces/kernel-1.trace", []byte("x")) // filtered out by id
	s.WriteFile(t, "legacy", "traces/kernel-1.trace", []byte("x"))
	var r struct{ TraceUpdated struct{ ID, State string } }
	if err := sub.Next(5*time.Second, &r); err != nil || r.TraceUpdated.ID != "legacy" {
		t.Fatalf("got %+v, %v", r, err)
	}
}

func TestOriginCheck(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	h := http.Header{"Origin": {"http://evil.example"}}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	_, resp, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", h)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: err %v, resp %v", err, resp)
	}
	req, _ := http.NewRequest("POST", s.URL+"/graphql", strings.NewReader(`{"query":"{ traces { totalCount } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin POST: %v %v", err, resp)
	}
	// The server's own origin is fine.
	h = http.Header{"Origin": {s.URL}}
	c, _, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", h)
	if err != nil {
		t.Fatalf("own origin: %v", err)
	}
	c.Close()
}

func TestShutdownSendsCloseFrame(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	subs := []*servertest.Subscription{
		s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { id } }`, nil),
		s.Subscribe(t, "graphql-ws", `subscription { traceUpdated { id } }`, nil),
	}
	done := make(chan error)
	go func() { done <- s.Close() }()
	for _, sub := range subs {
		var ce *websocket.CloseError
		if err := sub.Closed(); !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
			t.Fatalf("want a 1001 close frame, got %v", err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStalledSubscriberDoesNotDelayOthers: a client that subscribes and
// never reads again, with its socket full and messages waiting behind it,
// shares its subscription with a live one (the same document, so one
// execution serves both), which still gets the next change at once. The
// server's write deadline and pings are an hour: no drop can end the
// stall, so a fan-out that waited for the stalled socket would never
// deliver.
func TestStalledSubscriberDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.WebsocketWriteWait, c.WebsocketPing = time.Hour, time.Hour })
	const query = `subscription { traceUpdated(id: "t-1") { id bytes } }`
	// A small receive buffer, set before connecting so the window stays
	// small: the server's writes stall after little.
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, NetDial: func(network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			return serr
		}}
		return nd.Dial(network, addr)
	}}
	stalled, _, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.WriteJSON(map[string]any{"type": "connection_init"})
	var ack struct{ Type string }
	if err := stalled.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("ack: %+v %v", ack, err)
	}
	before := s.Subscribers()
	stalled.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query}})
	testkit.Eventually(t, 10*time.Second, "stalled client subscribed", func() bool { return s.Subscribers() > before })

	// Answers it never reads, each an error quoting a 200 kB cursor: more
	// than the sockets hold (with a receive window this small, the
	// server's send buffer stays small too), so its writes stall; far less
	// than its send queue holds, so it stays.
	big := map[string]any{
		"query":     `query($after: String) { traces(after: $after) { totalCount } }`,
		"variables": map[string]any{"after": strings.Repeat("x", 200<<10)},
	}
	for i := range 3 {
		if err := stalled.WriteJSON(map[string]any{"id": "q" + strconv.Itoa(i), "type": "subscribe", "payload": big}); err != nil {
			t.Fatal(err)
		}
	}
	live := s.Subscribe(t, "graphql-transport-ws", query, nil)
	s.WriteFile(t, "t-1", "traces/kernel-1.trace", []byte(strings.Repeat("y", 1000)))
	var r struct{ TraceUpdated struct{ ID string } }
	if err := live.Next(10*time.Second, &r); err != nil || r.TraceUpdated.ID != "t-1" {
		t.Fatalf("live subscriber: %+v %v", r, err)
	}
}

func TestDeadClientIsDropped(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.WebsocketPing = 100 * time.Millisecond })
	base := s.Subscribers()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	c, _, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteJSON(map[string]any{"type": "connection_init"})
	var ack map[string]any
	c.ReadJSON(&ack)
	c.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { traceUpdated { id } }"}})
	testkit.Eventually(t, 5*time.Second, "subscribed", func() bool { return s.Subscribers() == base+1 })
	// The client now reads nothing, so it answers no ping: a closed laptop.
	testkit.Eventually(t, 5*time.Second, "dead client dropped and its subscription ended", func() bool { return s.Subscribers() == base })
}
