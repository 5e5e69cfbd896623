package graph_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade/internal/app"
	"github.com/cascade-sim/cascade/internal/testutil"
)

func TestLegacyGraphQLWSProtocol(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t)
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
	s := testutil.Server(t)
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

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t)
	cases := []struct {
		name, query, code string
	}{
		{"BadCursor", `{ traces(after: "nonsense") { totalCount } }`, "BAD_USER_INPUT"},
		{"NegativeFirst", `{ traces(first: -1) { totalCount } }`, "BAD_USER_INPUT"},
		{"NotFound", `mutation { retryTrace(id: "missing") { id } }`, "NOT_FOUND"},
		{"Conflict", `mutation { retryTrace(id: "sample") { id } }`, "CONFLICT"},
		{"Validation", `{ traces { nosuchfield } }`, "GRAPHQL_VALIDATION_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.Do(t, c.query, nil, nil)
			if len(errs) != 1 || errs[0].Code() != c.code {
				t.Fatalf("errors %+v, want one with code %s", errs, c.code)
			}
		})
	}
}

func TestTracesPageWithCursors(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t)
	for _, id := range []string{"a", "b", "c"} {
		s.WriteFile(t, id, "traces/kernel-1.trace", []byte("x"))
	}
	type page struct {
		Traces struct {
			TotalCount int
			Edges      []struct {
				Cursor string
				Node   struct{ ID string }
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	testutil.Eventually(t, 5*time.Second, "three traces", func() bool {
		var p page
		s.MustDo(t, `{ traces(state: UPLOADING) { totalCount } }`, nil, &p)
		return p.Traces.TotalCount == 3
	})
	var seen []string
	var after any
	for {
		var p page
		s.MustDo(t, `query($after: String) { traces(state: UPLOADING, first: 2, after: $after) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after}, &p)
		for _, e := range p.Traces.Edges {
			seen = append(seen, e.Node.ID)
		}
		if !p.Traces.PageInfo.HasNextPage {
			break
		}
		after = *p.Traces.PageInfo.EndCursor
	}
	if len(seen) != 3 {
		t.Fatalf("paged %v", seen)
	}
}

func TestShutdownSendsCloseFrame(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t)
	subs := []*testutil.Subscription{
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

func TestStalledSubscriberDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t)
	// A client that subscribes and never reads again: its socket buffers
	// fill, its writes stall, and it must cost nobody else anything.
	stalled := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { id bytes } }`, nil)
	stalled.Conn.UnderlyingConn().(interface{ SetReadBuffer(int) error }).SetReadBuffer(4096)
	live := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated(id: "t-199") { id } }`, nil)
	for i := range 200 {
		s.WriteFile(t, "t-"+strconv.Itoa(i), "traces/kernel-1.trace", []byte(strings.Repeat("y", 1000)))
	}
	var r struct{ TraceUpdated struct{ ID string } }
	if err := live.Next(10*time.Second, &r); err != nil || r.TraceUpdated.ID != "t-199" {
		t.Fatalf("live subscriber: %+v %v", r, err)
	}
}

func TestDeadClientIsDropped(t *testing.T) {
	t.Parallel()
	s := testutil.Server(t, func(c *app.Config) { c.WebsocketPing = 100 * time.Millisecond })
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
	testutil.Eventually(t, 5*time.Second, "subscribed", func() bool { return s.Subscribers() == base+1 })
	// The client now reads nothing, so it answers no ping: a closed laptop.
	testutil.Eventually(t, 5*time.Second, "dead client dropped and its subscription ended", func() bool { return s.Subscribers() == base })
}
