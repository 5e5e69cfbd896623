package servertests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// nestedOfType is an introspection query that nests ofType n-4 times
// under __type { fields { type ... } }: n fields deep.
func nestedOfType(n int) string {
	return `{ __type(name: "Trace") { fields { type ` + strings.Repeat("{ ofType ", n-4) + "{ name }" + strings.Repeat(" }", n-4) + " } } }"
}

// TestQueryLimits: depth, complexity and size limits refuse an operation
// before it runs, with a code saying which; what the UI and GraphiQL ask
// passes.
func TestQueryLimits(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	cases := []struct {
		name, query, code, says string
	}{
		{"introspection at the depth limit", nestedOfType(transport.DefaultMaxDepth), "", ""},
		{"introspection deeper", nestedOfType(transport.DefaultMaxDepth + 1), "DEPTH_LIMIT_EXCEEDED", fmt.Sprintf("%d fields deep", transport.DefaultMaxDepth+1)},
		{"depth through fragments", `query { ...A } fragment A on Query { __schema { types { ...B } } } fragment B on __Type { fields { type ` +
			strings.Repeat("{ ofType ", 17) + "{ name }" + strings.Repeat(" }", 17) + ` } }`, "DEPTH_LIMIT_EXCEEDED", "limit of 20"},
		{"types referring back", "{ runs " + strings.Repeat("{ nodes { trace { runs ", 7) + "{ totalCount }" + strings.Repeat(" } } }", 7) + " }",
			"DEPTH_LIMIT_EXCEEDED", "23 fields deep"},
		// The validator's own limit on introspection lists.
		{"introspection lists in lists", `{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`,
			"GRAPHQL_VALIDATION_FAILED", "introspection depth"},
		// The web UI's largest query: a 2000-kernel chunk.
		{"a UI kernel chunk", `{ trace(id: "sample") { id kernels(first: 2000) { totalCount pageInfo { hasNextPage endCursor }
			nodes { kernelId context name demangledName displayName traceFile grid { x y z } block { x y z } instructions } } } }`, "", ""},
		{"pages of pages", `{ traces(first: 5000) { nodes { kernels(first: 5000) { nodes { name } } } } }`, "COMPLEXITY_LIMIT_EXCEEDED", "exceeds the limit"},
		{"many aliases", "{ " + strings.Repeat("a: traces(first: 1000) { nodes { id model } } ", 100) + "}", "COMPLEXITY_LIMIT_EXCEEDED", "exceeds the limit"},
		{"too many tokens", "{ " + strings.Repeat("__typename ", transport.DefaultMaxTokens) + "}", "GRAPHQL_PARSE_FAILED", "token limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Post(t, "", c.query, nil)
			if c.code == "" {
				if len(r.Errors) > 0 {
					t.Fatalf("errors %+v", r.Errors)
				}
				return
			}
			if len(r.Errors) != 1 || r.Errors[0].Code() != c.code || !strings.Contains(r.Errors[0].Message, c.says) {
				t.Fatalf("errors %+v, want one with code %s saying %q", r.Errors, c.code, c.says)
			}
			if len(r.Data) > 0 {
				t.Errorf("data %s: the operation ran", r.Data)
			}
		})
	}
}

// TestRequestBodyLimit: a body over the limit is refused 413, whatever it
// holds.
func TestRequestBodyLimit(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	body := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 9<<20) + `"}}`
	resp, err := http.Post(s.URL+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r servertest.Response
	json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "more than 8388608 bytes") {
		t.Fatalf("status %d, errors %+v", resp.StatusCode, r.Errors)
	}
}

// wsMessage is a message of either websocket subprotocol.
type wsMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// TestSubscriptionsPerConnection: a websocket holds at most the limit; one
// more gets an error message with code TOO_MANY_SUBSCRIPTIONS, and once
// one ends there is room again, at once: a client that stops one and
// starts another right after, without waiting for anything, gets it.
// Other connections are not affected.
func TestSubscriptionsPerConnection(t *testing.T) {
	t.Parallel()
	const limit = 3
	s := servertest.Server(t, func(c *app.Config) { c.Limits.MaxSubscriptionsPerConn = limit })
	conn, err := s.DialWS(t, "graphql-transport-ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	subscribe := func(id string) {
		t.Helper()
		err := conn.WriteJSON(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": "subscription { traceUpdated { id } }"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	base := s.Subscribers()
	for i := range limit {
		subscribe(fmt.Sprint(i))
	}
	testkit.Eventually(t, 5*time.Second, "subscriptions live", func() bool { return s.Subscribers() == base+limit })
	subscribe("one-too-many")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m wsMessage
	if err := conn.ReadJSON(&m); err != nil {
		t.Fatal(err)
	}
	var errs []struct {
		Message    string
		Extensions map[string]any
	}
	json.Unmarshal(m.Payload, &errs)
	if m.Type != "error" || m.ID != "one-too-many" || len(errs) != 1 || errs[0].Extensions["code"] != "TOO_MANY_SUBSCRIPTIONS" {
		t.Fatalf("got %s %s %s, want an error for one-too-many with code TOO_MANY_SUBSCRIPTIONS", m.Type, m.ID, m.Payload)
	}
	t.Logf("refused: %s", errs[0].Message)

	// Another connection has its own count.
	other := s.Subscribe(t, "graphql-transport-ws", "subscription { traceUpdated { id } }", nil)
	defer other.Conn.Close()
	testkit.Eventually(t, 5*time.Second, "the other connection's live", func() bool { return s.Subscribers() == base+limit+1 })

	// Ending one makes room at once: the client starts another right
	// after, waiting for nothing. New traces' events reach the new one (a
	// trace every half second, as it may not be live for the first), so it
	// was not refused.
	if err := conn.WriteJSON(map[string]any{"id": "0", "type": "complete"}); err != nil {
		t.Fatal(err)
	}
	subscribe("room-again")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	heard := make(chan wsMessage, 1)
	go func() {
		defer close(heard)
		for {
			var m wsMessage
			if err := conn.ReadJSON(&m); err != nil {
				return
			}
			if m.ID == "room-again" {
				heard <- m
				return
			}
		}
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		s.WriteFile(t, fmt.Sprintf("made-room-%d", n), "traces/kernel-1.trace", []byte("x"))
		select {
		case m, ok := <-heard:
			if !ok {
				t.Fatalf("no event for room-again after %d new traces", n+1)
			}
			if m.Type != "next" {
				t.Fatalf("room-again: %s %s", m.Type, m.Payload)
			}
			return
		case <-tick.C:
		}
	}
}

// TestConnectionsPerClient: one address holds at most the limit of
// websockets; one more is closed at once with 1013 (try again later) and a
// reason, and once one closes there is room again.
func TestConnectionsPerClient(t *testing.T) {
	t.Parallel()
	const limit = 2
	s := servertest.Server(t, func(c *app.Config) { c.Limits.MaxConnsPerClient = limit })
	var conns []*websocket.Conn
	for range limit {
		c, err := s.DialWS(t, "graphql-transport-ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		_, err := s.DialWS(t, protocol, nil)
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "too many websockets from 127.0.0.1: at most 2") {
			t.Fatalf("%s: want a 1013 close saying too many websockets, got %v", protocol, err)
		}
	}
	// HTTP requests are not websockets: they still work.
	s.MustDo(t, "{ __typename }", nil, nil)

	conns[0].Close()
	testkit.Eventually(t, 5*time.Second, "room again", func() bool {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		c, _, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", nil)
		if err != nil {
			return false
		}
		defer c.Close()
		c.WriteJSON(map[string]any{"type": "connection_init"})
		var m wsMessage
		return c.ReadJSON(&m) == nil && m.Type == "connection_ack"
	})
}

// TestWebsocketMessageLimit: a websocket message over 1 MiB closes the
// connection with 1009 (message too big) before it is read whole.
func TestWebsocketMessageLimit(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	conn, err := s.DialWS(t, "graphql-transport-ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	big := map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": "{ __typename }", "variables": map[string]any{"pad": strings.Repeat("x", 2<<20)}}}
	conn.WriteJSON(big) // the server may close before it has all of it
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		var m wsMessage
		err := conn.ReadJSON(&m)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.CloseMessageTooBig {
				t.Fatalf("close %d %q, want 1009", ce.Code, ce.Text)
			}
			break
		}
		if err != nil {
			t.Fatalf("want a 1009 close frame, got %v", err)
		}
	}
	s.MustDo(t, "{ __typename }", nil, nil)
}
