package servertests_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// logRecorder is a slog handler that keeps the messages of Info and above.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelDebug }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *logRecorder) WithGroup(string) slog.Handler                { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	m := rec.Message
	rec.Attrs(func(a slog.Attr) bool { m += " " + a.String(); return true })
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) count(substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// TestSlowClientIsDroppedWithReason is a real websocket client that asks
// for far more than it reads: the server drops it, counts and logs it
// once, and, when the client reads again, what it finds after the last
// whole message is a 1008 close frame saying why.
func TestSlowClientIsDroppedWithReason(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	// The queue's overflow is what this test is about: the other ways to
	// be dropped, a write not taken in time and pings unanswered, wait an
	// hour, so however slowly a loaded machine answers they do not come
	// first.
	s := servertest.Server(t, func(c *app.Config) {
		c.Logger = slog.New(logs)
		c.WebsocketWriteWait, c.WebsocketPing = time.Hour, time.Hour
	})
	// A receive buffer of a megabyte, set before connecting: with the
	// default one, which a client that does not read never grows, a read
	// frees less than one loopback segment (64 kB), so the client
	// advertises no window and the server waits for its zero-window
	// probes, which back off the longer the client did not read: the
	// stream crawls once it reads again.
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, NetDial: func(network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1<<20) })
			return serr
		}}
		return nd.Dial(network, addr)
	}}
	c, _, err := d.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteJSON(map[string]any{"type": "connection_init"})
	var ack struct{ Type string }
	if err := c.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("ack: %+v %v", ack, err)
	}
	// Each answer is an error quoting a 200 kB cursor: some dozens fill
	// the sockets' buffers and then the server's send queue. (A tiny
	// SO_RCVBUF would make the stream crawl once reading resumes: TCP's
	// zero-window probes back off.)
	payload := map[string]any{
		"query":     `query($after: String) { traces(after: $after) { totalCount } }`,
		"variables": map[string]any{"after": strings.Repeat("x", 200<<10)},
	}
	sent := map[string]bool{}
	for i := 0; i < 2000 && s.DroppedClients() == 0; i++ {
		sent[strconv.Itoa(i)] = true
		if err := c.WriteJSON(map[string]any{"id": strconv.Itoa(i), "type": "subscribe", "payload": payload}); err != nil {
			break // the server closed the connection
		}
	}
	// The loop ends at the drop: 2000 answers are far more than the queue.
	testkit.Eventually(t, 10*time.Second, "slow client dropped", func() bool { return s.DroppedClients() == 1 })

	// Reading again: whole answers, then the close frame.
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	next := 0
	for {
		var m struct{ ID, Type string }
		_, data, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "waiting to be sent") {
				buf := make([]byte, 1<<20)
				for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
					if strings.Contains(g, "gorillaConn") {
						t.Log(g)
					}
				}
				t.Fatalf("after %d answers: want a 1008 close frame saying why, got %v (log: %q)", next, err, logs.msgs)
			}
			t.Logf("close frame after %d answers: %d %q", next, ce.Code, ce.Text)
			break
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("message %d: %v", next, err)
		}
		if m.Type == "next" {
			if !sent[m.ID] {
				t.Fatalf("answer to %q, which was never asked or already answered", m.ID)
			}
			delete(sent, m.ID)
			next++
		}
	}
	if next == 0 {
		t.Fatal("no answer came before the close frame")
	}
	if n := logs.count("dropping a websocket client"); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
	if n := logs.count("websocket client dropped"); n != 0 {
		t.Errorf("%d more lines about the drop, want none", n)
	}
	if n := s.DroppedClients(); n != 1 {
		t.Errorf("counted %d drops, want 1", n)
	}
}
