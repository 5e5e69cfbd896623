package transport_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade"
)

// TestErrorEndsTheOperation: over graphql-transport-ws an error message
// ends its operation; no complete follows it for that id (the protocol:
// "error ... terminates the operation"). An id that ended in an error
// may be used again, and that operation completes as any other does.
func TestErrorEndsTheOperation(t *testing.T) {
	t.Parallel()
	s := newHubServer(t, cascade.Tokens{})
	conn, _, err := (&websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}).Dial(s.url, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type msg struct{ ID, Type string }
	send := func(m map[string]any) {
		t.Helper()
		if err := conn.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	// untilPong sends a ping and returns every message before its pong:
	// the transport answers in order, so all that the messages before the
	// ping caused has been sent by then.
	untilPong := func() []msg {
		t.Helper()
		send(map[string]any{"type": "ping"})
		var got []msg
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			var m msg
			if err := conn.ReadJSON(&m); err != nil {
				t.Fatalf("after %+v: %v", got, err)
			}
			if m.Type == "pong" {
				return got
			}
			got = append(got, m)
		}
	}
	send(map[string]any{"type": "connection_init"})
	untilPong()
	send(map[string]any{"id": "invalid", "type": "subscribe", "payload": map[string]any{"query": "subscription { noSuchField }"}})
	send(map[string]any{"id": "not-json", "type": "subscribe", "payload": "a string, not an object"})
	got := untilPong()
	want := []msg{{"invalid", "error"}, {"not-json", "error"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v and nothing more", got, want)
	}
	// The id again, for a subscription that runs; stopped, it completes.
	send(map[string]any{"id": "invalid", "type": "subscribe", "payload": map[string]any{"query": "subscription { traceRemoved }"}})
	untilPong()
	send(map[string]any{"id": "invalid", "type": "complete"})
	// The complete comes from the subscription's goroutine, maybe after
	// the pong: read until it comes.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var m msg
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("no complete for a stopped subscription: %v", err)
		}
		if m == (msg{"invalid", "complete"}) {
			break
		}
	}
}
