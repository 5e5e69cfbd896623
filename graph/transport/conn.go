package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// Each connection's messages wait, framed, in a queue of at most
// sendQueueBytes for its socket. A client whose queue overflows, or that
// takes nothing for writeWait, has stopped reading (or reads slower than
// events come): it is dropped with a closeDropped frame saying why, rather
// than let its backlog grow. Its client reconnects and refetches.
const (
	sendQueueBytes = 4 << 20
	closeDropped   = websocket.ClosePolicyViolation // 1008
)

var errDropped = errors.New("websocket client dropped")

// gorillaConn adapts *websocket.Conn to transport.WebsocketConn. Every
// frame, gqlgen's messages, the hub's and the library's control frames,
// goes into one queue of framed bytes. Whoever queues tries to write it at
// once without waiting (flush); what the socket does not take, writeLoop
// writes, waiting up to writeWait. So a message costs no goroutine hop,
// and a socket that does not keep up holds up only its own queue.
type gorillaConn struct {
	*websocket.Conn
	ws        *gorillaWebsockets
	wire      *wire
	next      []byte // ends a data message: `,"type":"next"}` or "data"
	done      chan struct{}
	closeOnce sync.Once
	lastPong  atomic.Int64

	// The last message read: gqlgen reads and starts each operation on
	// one goroutine, so the hub learns the id of the subscription it is
	// asked to start from it (see hub).
	lastMsg []byte

	// errorEnds: the subprotocol (graphql-transport-ws) ends an operation
	// with an error message, complete never follows; errored holds the
	// ids of the latest such, under mu (see WriteJSON).
	errorEnds bool
	errored   []string

	wake    chan struct{} // writeLoop has work
	written chan struct{} // closed when writeLoop ends
	drop    chan struct{} // closed by dropLocked

	mu         sync.Mutex // guards the fields below
	pend       []byte     // whole frames queued behind out
	out        []byte     // frames being written: out[:off] went out
	off        int
	busy       bool   // a writer (writeLoop or a flush) owns out and the socket
	scheduled  bool   // waiting for a flusher
	closeFrame []byte // queued by WriteClose: the last frame
	outClosed  bool   // by Close
	writerGone bool   // writeLoop ended: nothing more goes out
	dropped    bool
	dropReason string
	dropWait   time.Duration // for the client's close frame
	dropSend   time.Duration // to write the rest of a cut frame and the close frame
}

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

// nextFrameSuffix ends a data message of the connection's subprotocol.
func nextFrameSuffix(subprotocol string) []byte {
	if subprotocol == "graphql-transport-ws" {
		return []byte(`,"type":"next"}`)
	}
	return []byte(`,"type":"data"}`)
}

// keepAlive pings at the websocket level, which every client answers, for
// both subprotocols, and drops a client that stopped answering.
func (c *gorillaConn) keepAlive(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if time.Since(time.Unix(0, c.lastPong.Load())) > 2*every {
				c.dropSlow(fmt.Sprintf("no pong in %v", 2*every), closeWait, closeWait)
				return
			}
			c.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
		}
	}
}

// dropSlow drops a client that stopped reading (see dropLocked).
func (c *gorillaConn) dropSlow(reason string, wait, send time.Duration) {
	c.mu.Lock()
	c.dropLocked(reason, wait, send)
	c.mu.Unlock()
}

// dropLocked drops a client that stopped reading: it is counted and
// logged once; the write in flight is cut short, and writeLoop sends the
// rest of the frame it was in (so the client reads whole messages), then a
// close frame saying why, within send; the connection ends at the
// client's close frame or wait later (a client that answers no ping gets
// a second), which ends gqlgen's reader and so every subscription.
func (c *gorillaConn) dropLocked(reason string, wait, send time.Duration) {
	if c.dropped || c.writerGone {
		return
	}
	c.dropped = true
	c.dropWait, c.dropSend, c.dropReason = wait, send, reason
	n := c.ws.dropped.Add(1)
	c.ws.log.Warn("dropping a websocket client that stopped reading", "remote", c.RemoteAddr().String(),
		"reason", reason, "dropped_total", n)
	c.pend = nil
	// Cut a blocked write short. The writer sets its deadline under mu and
	// checks dropped first, so this one is the last.
	c.wire.Conn.SetWriteDeadline(time.Now().Add(-time.Second))
	close(c.drop)
	// A writeLoop that last woke while a flush was writing waits for wake
	// alone (wakeOnly), and that flush may have ended with nothing left
	// and no kick: wake it, or the close frame would never be sent.
	c.kick()
}

// isDropped reports whether the client was dropped.
func (c *gorillaConn) isDropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// queuedLocked is how many bytes wait to be written.
func (c *gorillaConn) queuedLocked() int { return len(c.pend) + len(c.out) - c.off }

// reserveLocked checks there is room for n more bytes; a full queue drops
// the client.
func (c *gorillaConn) reserveLocked(n int) error {
	switch {
	case c.dropped:
		return errDropped
	case c.outClosed || c.writerGone || c.closeFrame != nil:
		return net.ErrClosed
	}
	if q := c.queuedLocked(); q+n > sendQueueBytes {
		c.dropLocked(fmt.Sprintf("%d bytes waiting to be sent", q), c.ws.writeWait, c.ws.writeWait)
		return errDropped
	}
	return nil
}

// queueText queues a text message without waiting; call flush after.
func (c *gorillaConn) queueText(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.reserveLocked(len(data) + 10); err != nil {
		return err
	}
	c.pend = appendFrameHeader(c.pend, opText, len(data))
	c.pend = append(c.pend, data...)
	return nil
}

// queueNext queues a data message of subscription id (JSON, quoted) made
// of payload's encoding: `{"payload":`+payload+`,"id":` come in head. It
// reports whether the connection needs flushing by a flusher (see
// gorillaWebsockets.flushLater): no flush or writer has it in hand yet.
func (c *gorillaConn) queueNext(head, id []byte) (schedule bool, err error) {
	n := len(head) + len(id) + len(c.next)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.reserveLocked(n + 10); err != nil {
		return false, err
	}
	c.pend = appendFrameHeader(c.pend, opText, n)
	c.pend = append(c.pend, head...)
	c.pend = append(c.pend, id...)
	c.pend = append(c.pend, c.next...)
	if c.scheduled || c.busy {
		return false, nil
	}
	c.scheduled = true
	return true, nil
}

// queueFrame queues a frame the websocket library made.
func (c *gorillaConn) queueFrame(f []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.reserveLocked(len(f)); err != nil {
		return err
	}
	c.pend = append(c.pend, f...)
	return nil
}

// kick wakes writeLoop.
func (c *gorillaConn) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeLocked makes out the next frames to write, if out is all written.
func (c *gorillaConn) takeLocked() {
	if c.off < len(c.out) {
		return
	}
	c.out, c.pend = c.pend, c.out[:0]
	c.off = 0
	if cap(c.pend) > 2*maxIdleBuffer {
		c.pend = nil // a burst's buffer is not kept for an idle client
	}
}

// maxIdleBuffer is the buffer a connection keeps between bursts.
const maxIdleBuffer = 64 << 10

// flush writes what is queued as far as the socket takes it at once, on
// the caller's goroutine; writeLoop writes the rest.
func (c *gorillaConn) flush() {
	c.mu.Lock()
	c.scheduled = false
	if c.busy || c.dropped || c.queuedLocked() == 0 {
		c.mu.Unlock()
		return
	}
	c.busy = true
	for {
		c.takeLocked()
		if len(c.out) == c.off || c.dropped {
			break
		}
		buf := c.out[c.off:]
		c.mu.Unlock()
		n, blocked := c.wire.tryWrite(buf)
		c.mu.Lock()
		c.off += n
		if blocked {
			break
		}
	}
	c.busy = false
	more := c.queuedLocked() > 0 || c.dropped || c.closeFrame != nil || c.outClosed
	c.mu.Unlock()
	if more {
		c.kick()
	}
}

// writeLoop writes what flush could not, waiting for the socket up to
// writeWait; then the close frame, when one is queued. When the client is
// dropped it ends the connection (see dropLocked).
func (c *gorillaConn) writeLoop() {
	defer func() {
		c.mu.Lock()
		c.writerGone = true
		c.mu.Unlock()
		close(c.written)
	}()
	wakeOnly := false
	for {
		if wakeOnly {
			<-c.wake
		} else {
			select {
			case <-c.wake:
			case <-c.drop:
			}
		}
		c.mu.Lock()
		if wakeOnly = c.busy; wakeOnly {
			// A flush is writing; it kicks again when it stops.
			c.mu.Unlock()
			continue
		}
		c.busy = true
		var err error
		for !c.dropped {
			c.takeLocked()
			if len(c.out) == c.off {
				break
			}
			c.wire.Conn.SetWriteDeadline(time.Now().Add(c.ws.writeWait))
			buf := c.out[c.off:]
			c.mu.Unlock()
			var n int
			n, err = c.wire.Conn.Write(buf)
			c.mu.Lock()
			c.off += n
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					c.dropLocked(fmt.Sprintf("a write not taken in %v", c.ws.writeWait), 0, closeWait)
				}
				break
			}
		}
		if err == nil && !c.dropped {
			// No deadline while idle: a write that does not wait (flush)
			// would find it passed.
			c.wire.Conn.SetWriteDeadline(time.Time{})
		}
		c.busy = false
		switch {
		case c.dropped:
			c.mu.Unlock()
			c.sendDrop()
			return
		case err != nil:
			c.mu.Unlock()
			c.Conn.Close()
			return
		case c.closeFrame != nil && c.queuedLocked() == 0:
			f := c.closeFrame
			c.mu.Unlock()
			c.wire.Conn.SetWriteDeadline(time.Now().Add(closeWait))
			c.wire.Conn.Write(f)
			return
		case c.outClosed && c.queuedLocked() == 0:
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// sendDrop finishes the frame a drop cut short, sends the close frame
// saying why, and half-closes the connection. The client's own close
// frame ends gqlgen's reader, or the read deadline does. Closing now
// instead would reset the connection if a request of the client's is
// still unread, and the reset takes our close frame with it.
func (c *gorillaConn) sendDrop() {
	c.mu.Lock()
	rest := c.out[c.off:frameEnd(c.out, c.off)]
	c.out, c.off, c.pend = nil, 0, nil
	reason, wait, send := c.dropReason, c.dropWait, c.dropSend
	c.mu.Unlock()
	c.wire.Conn.SetWriteDeadline(time.Now().Add(send))
	if _, err := c.wire.Conn.Write(rest); err == nil {
		c.wire.Conn.Write(closeFrame(closeDropped, reason))
	}
	c.Conn.SetReadDeadline(time.Now().Add(wait))
	c.wire.CloseWrite()
}

// closeFrame is a close frame with code and reason.
func closeFrame(code int, reason string) []byte {
	p := websocket.FormatCloseMessage(code, reason)
	return append(appendFrameHeader(nil, opClose, len(p)), p...)
}

// NextReader reports a peer's normal close as transport.ErrWebsocketClosed,
// and notes the id of each message read (see lastID). A dropped client's
// messages are read and discarded, not run: what it asked after the drop
// would be answered to no one, and a client that sends more than it reads
// may have dozens of requests in the socket's buffers, which would hold
// the CPU its own reading, and other clients, need. They are read (and the
// connection is kept) until the client's close frame answers ours or the
// drop's wait ends, so closing does not reset the connection and take our
// close frame with it.
func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	mt, r, err := c.Conn.NextReader()
	for err == nil && c.isDropped() {
		if _, err = io.Copy(io.Discard, r); err == nil {
			mt, r, err = c.Conn.NextReader()
		}
	}
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
		return mt, r, transport.ErrWebsocketClosed
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return mt, r, transport.ErrWebsocketClosed
	}
	if err != nil {
		return mt, r, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return mt, nil, err
	}
	c.lastMsg = data
	c.forgetErrored(data)
	return mt, bytes.NewReader(data), nil
}

// lastSubscribe is the id and query of the last message read, decoded
// only when the hub asks (for subscriptions).
func (c *gorillaConn) lastSubscribe() (id, query string) {
	var m struct {
		ID      string `json:"id"`
		Payload struct {
			Query string `json:"query"`
		} `json:"payload"`
	}
	if json.Unmarshal(c.lastMsg, &m) != nil {
		return "", ""
	}
	return m.ID, m.Payload.Query
}

// WriteJSON queues one message. Over graphql-transport-ws an error
// message ends its operation, but gqlgen's transport sends complete after
// one (for a subscription that does not parse or validate, or whose
// payload is not JSON, or that panicked: see subscribe in gqlgen's
// graphql/handler/transport/websocket.go); that complete is dropped here.
func (c *gorillaConn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.errorEnds && c.afterError(b) {
		return nil
	}
	if err := c.queueText(b); err != nil {
		return err
	}
	c.flush()
	return nil
}

// maxErrored is how many ids of operations ended by an error a connection
// remembers: the complete gqlgen sends after an error comes right after it.
const maxErrored = 16

// Ends of graphql-transport-ws messages as gqlgen encodes them: the type
// comes last.
var (
	errorEnd    = []byte(`"type":"error"}`)
	completeEnd = []byte(`"type":"complete"}`)
)

// afterError notes the id of an error message, and reports whether b is
// the complete of an operation that an error message ended.
func (c *gorillaConn) afterError(b []byte) (drop bool) {
	isError := bytes.HasSuffix(b, errorEnd)
	if !isError && !bytes.HasSuffix(b, completeEnd) {
		return false
	}
	var m struct{ ID string }
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if isError {
		if len(c.errored) == maxErrored {
			c.errored = c.errored[1:]
		}
		c.errored = append(c.errored, m.ID)
		return false
	}
	n := len(c.errored)
	c.errored = slices.DeleteFunc(c.errored, func(id string) bool { return id == m.ID })
	return len(c.errored) < n
}

// forgetErrored forgets an id that ended in an error once the client
// subscribes with it again: the new operation's complete is sent.
func (c *gorillaConn) forgetErrored(data []byte) {
	if !c.errorEnds {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errored) == 0 {
		return
	}
	var m struct{ ID, Type string }
	if json.Unmarshal(data, &m) != nil || m.Type != "subscribe" {
		return
	}
	c.errored = slices.DeleteFunc(c.errored, func(id string) bool { return id == m.ID })
}

// WriteClose queues a close frame after the messages before it; nothing
// is sent after it. During shutdown gqlgen's normal closure goes out as
// 1001 "going away", so clients know to reconnect.
func (c *gorillaConn) WriteClose(code int, msg string) error {
	if c.ws.closing.Load() && code == websocket.CloseNormalClosure {
		code, msg = websocket.CloseGoingAway, "server shutting down"
	}
	c.mu.Lock()
	if c.dropped || c.closeFrame != nil || c.writerGone {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.closeFrame = closeFrame(code, msg)
	c.mu.Unlock()
	c.kick()
	return nil
}

// Close closes the connection once, after the writer sent what was
// queued, for up to closeWait.
func (c *gorillaConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		c.mu.Lock()
		c.outClosed = true
		c.mu.Unlock()
		c.kick()
		select {
		case <-c.written:
		case <-time.After(closeWait):
		}
		err = c.Conn.Close()
		c.ws.mu.Lock()
		delete(c.ws.conns, c)
		c.ws.idle.Broadcast()
		c.ws.mu.Unlock()
	})
	return err
}
