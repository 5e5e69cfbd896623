package servertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/gorilla/websocket"
)

// Subscription is a real websocket client of one GraphQL subscription,
// speaking graphql-transport-ws or the legacy graphql-ws.
type Subscription struct {
	Conn     *websocket.Conn
	protocol string
	msgs     chan json.RawMessage // closed when the connection ends
	done     chan error           // the read loop's end: the close frame's error
	complete chan struct{}        // closed when the server completed the subscription
}

// ErrCompleted is returned by Subscription.Next once the server completed
// the subscription.
var ErrCompleted = errors.New("subscription completed by the server")

// Subscribe opens a websocket with the given subprotocol
// ("graphql-transport-ws" or "graphql-ws") and starts the subscription; it
// returns once the server's broker holds it, so the test's next change
// cannot go unseen.
func (s *TestServer) Subscribe(t testing.TB, protocol, query string, vars map[string]any) *Subscription {
	t.Helper()
	before := s.Subscribers()
	sub := s.SubscribeNow(t, protocol, query, vars)
	// The protocol acknowledges no subscription: wait until the server's
	// broker holds it.
	testkit.Eventually(t, 5*time.Second, "subscription is live", func() bool { return s.Subscribers() > before })
	return sub
}

// SubscribeNow is Subscribe as a script does it: it returns as soon as the
// subscribe message is sent, without knowing whether the server has
// registered the subscription yet.
func (s *TestServer) SubscribeNow(t testing.TB, protocol, query string, vars map[string]any) *Subscription {
	t.Helper()
	init := map[string]any{}
	if s.Token != "" {
		init["authorization"] = "Bearer " + s.Token
	}
	conn, err := s.DialWS(t, protocol, init)
	if err != nil {
		t.Fatalf("connection_init: %v", err)
	}
	return startSubscription(t, conn, protocol, query, vars)
}

// DialWS opens a websocket with the given subprotocol and sends
// connection_init with payload. It returns the connection once the server
// acknowledged it, or the error that ended it instead (a
// *websocket.CloseError for a close frame). The connection is closed when
// the test ends.
func (s *TestServer) DialWS(t testing.TB, protocol string, payload map[string]any) (*websocket.Conn, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{protocol}, HandshakeTimeout: 5 * time.Second, TLSClientConfig: s.TLS}
	conn, resp, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", http.Header{})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	if conn.Subprotocol() != protocol {
		t.Fatalf("negotiated %q, want %q", conn.Subprotocol(), protocol)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		var m struct{ Type string }
		if err := conn.ReadJSON(&m); err != nil {
			return nil, err
		}
		if m.Type == "connection_ack" {
			break
		}
	}
	conn.SetReadDeadline(time.Time{})
	return conn, nil
}

// SubscribeOn starts a subscription on a connection DialWS opened.
func SubscribeOn(t testing.TB, conn *websocket.Conn, protocol, query string, vars map[string]any) *Subscription {
	t.Helper()
	return startSubscription(t, conn, protocol, query, vars)
}

func startSubscription(t testing.TB, conn *websocket.Conn, protocol, query string, vars map[string]any) *Subscription {
	t.Helper()
	sub := &Subscription{Conn: conn, protocol: protocol, msgs: make(chan json.RawMessage, 1024), done: make(chan error, 1), complete: make(chan struct{})}
	start := "subscribe"
	if protocol == "graphql-ws" {
		start = "start"
	}
	payload := map[string]any{"query": query, "variables": vars}
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": start, "payload": payload}); err != nil {
		t.Fatal(err)
	}
	go sub.read()
	return sub
}

func (s *Subscription) read() {
	defer close(s.msgs)
	for {
		var m struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := s.Conn.ReadJSON(&m); err != nil {
			s.done <- err
			return
		}
		switch m.Type {
		case "next", "data":
			s.msgs <- m.Payload
		case "ping":
			s.Conn.WriteJSON(map[string]any{"type": "pong"})
		case "error":
			s.msgs <- json.RawMessage(fmt.Sprintf(`{"errors": %s}`, m.Payload))
		case "complete":
			select {
			case <-s.complete:
			default:
				close(s.complete)
			}
		}
	}
}

// Next waits for the next result and decodes its data into out. It
// returns ErrTimeout when none came within timeout, ErrCompleted once the
// server completed the subscription and every result before that was read,
// and an error for a result with errors or a closed connection.
func (s *Subscription) Next(timeout time.Duration, out any) error {
	var p json.RawMessage
	var ok bool
	select {
	case p, ok = <-s.msgs:
	case <-s.complete:
		select {
		case p, ok = <-s.msgs:
		default:
			return ErrCompleted
		}
	case <-time.After(timeout):
		return ErrTimeout
	}
	if !ok {
		return fmt.Errorf("connection closed: %v", s.Closed())
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(p, &r); err != nil {
		return err
	}
	if len(r.Errors) > 0 && string(r.Errors) != "null" {
		return fmt.Errorf("subscription error: %s", r.Errors)
	}
	return json.Unmarshal(r.Data, out)
}

// Closed returns the error that ended the connection (a
// *websocket.CloseError for a close frame), waiting up to 5 s for it.
func (s *Subscription) Closed() error {
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(5 * time.Second):
		return ErrTimeout
	}
}
