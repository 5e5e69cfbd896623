package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// Websocket timings. A client that answers no ping for two intervals is
// dead (a closed laptop, a dropped network) and its connection is closed;
// a write that cannot finish in writeWait means the same.
const (
	pingInterval = 15 * time.Second
	writeWait    = 10 * time.Second
	closeWait    = time.Second
)

// Each connection's messages wait in a queue of at most sendQueueBytes
// for its writer. A client whose queue overflows, or that takes no
// message for writeWait, has stopped reading (or reads slower than events
// come): it is dropped with a closeDropped frame saying why, rather than
// let its backlog grow. Its client reconnects and refetches.
const (
	sendQueueBytes = 4 << 20
	sendQueueLen   = 4096
	closeDropped   = websocket.ClosePolicyViolation // 1008
)

var errDropped = errors.New("websocket client dropped")

// gorillaWebsockets plugs gorilla/websocket into gqlgen's websocket
// transport and keeps the set of open connections, so shutdown can close
// each with a close frame.
type gorillaWebsockets struct {
	upgrader websocket.Upgrader
	ping     time.Duration
	log      *slog.Logger

	closing atomic.Bool
	dropped atomic.Int64 // clients dropped for not reading
	mu      sync.Mutex
	idle    *sync.Cond // signalled when a connection leaves conns
	conns   map[*gorillaConn]struct{}
}

// errShuttingDown refuses websockets that arrive during shutdown.
var errShuttingDown = errors.New("server shutting down")

var _ transport.WebsocketImplementation = (*gorillaWebsockets)(nil)

// Accept implements transport.WebsocketImplementation.
func (g *gorillaWebsockets) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	if g.closing.Load() {
		return nil, errShuttingDown
	}
	up := g.upgrader
	up.Subprotocols = opts.Subprotocols
	hj := &batchHijacker{ResponseWriter: w}
	c, err := up.Upgrade(hj, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	conn := &gorillaConn{Conn: c, ws: g, batch: hj.conn, done: make(chan struct{}),
		out: make(chan outMsg, sendQueueLen), written: make(chan struct{}), drop: make(chan struct{})}
	conn.lastPong.Store(time.Now().UnixNano())
	c.SetPongHandler(func(string) error {
		conn.lastPong.Store(time.Now().UnixNano())
		return nil
	})
	g.mu.Lock()
	if g.conns == nil {
		g.conns = map[*gorillaConn]struct{}{}
		g.idle = sync.NewCond(&g.mu)
	}
	g.conns[conn] = struct{}{}
	g.mu.Unlock()
	go conn.keepAlive(g.ping)
	go conn.writeLoop()
	return conn, nil
}

// wait blocks until no connection is open.
func (g *gorillaWebsockets) wait() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.conns) > 0 {
		g.idle.Wait()
	}
}

// closeAll force-closes connections still open after shutdown's grace.
func (g *gorillaWebsockets) closeAll() {
	g.mu.Lock()
	conns := make([]*gorillaConn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.WriteClose(websocket.CloseGoingAway, "server shutting down")
			c.Close()
		})
	}
	wg.Wait()
}

// gorillaConn adapts *websocket.Conn to transport.WebsocketConn. gqlgen
// serialises its writes, which queue for writeLoop, the one writer of
// messages; WriteControl and Close may run beside them.
type gorillaConn struct {
	*websocket.Conn
	ws        *gorillaWebsockets
	batch     *batchConn // under Conn
	done      chan struct{}
	closeOnce sync.Once
	lastPong  atomic.Int64

	mu         sync.Mutex // guards out's sends and close, and the fields below it
	out        chan outMsg
	outClosed  bool          // by Close
	writerGone bool          // writeLoop ended: nothing more goes out
	queued     int           // bytes in out
	written    chan struct{} // closed when writeLoop ends
	drop       chan struct{} // closed by dropSlow
	dropOnce   sync.Once
	dropReason string
	dropWait   time.Duration // for the client's close frame
}

// outMsg is a message waiting for writeLoop: data, or a close frame.
type outMsg struct {
	data      []byte
	close     bool
	code      int
	closeText string
}

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

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
				c.dropSlow(fmt.Sprintf("no pong in %v", 2*every), closeWait)
				return
			}
			c.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
		}
	}
}

// dropSlow drops a client that stopped reading: it is counted and logged
// once, writeLoop sends a close frame saying why once the write in flight
// is out (within writeWait), and the connection ends at the client's
// close frame or wait later (a client that answers no ping gets a
// second), which ends gqlgen's reader and so every subscription.
func (c *gorillaConn) dropSlow(reason string, wait time.Duration) {
	c.dropOnce.Do(func() {
		c.dropWait = wait
		n := c.ws.dropped.Add(1)
		c.ws.log.Warn("dropping a websocket client that stopped reading", "remote", c.RemoteAddr().String(),
			"reason", reason, "dropped_total", n)
		c.dropReason = reason
		close(c.drop)
	})
}

// writeLoop writes the queued messages in order: each time, all those
// queued (up to maxBatchBytes) in one write, within writeWait. When the
// client is dropped it writes the close frame once the write in flight, if
// any, is out, and ends the connection (see dropSlow).
func (c *gorillaConn) writeLoop() {
	defer func() {
		c.mu.Lock()
		c.writerGone = true
		c.mu.Unlock()
		close(c.written)
	}()
	for {
		select {
		case <-c.drop:
			c.Conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeDropped, c.dropReason), time.Now().Add(closeWait))
			// The client's own close frame ends gqlgen's reader, or the
			// read deadline does. Closing now instead would reset the
			// connection if a request of the client's is still unread, and
			// the reset takes our close frame with it.
			c.Conn.SetReadDeadline(time.Now().Add(c.dropWait))
			if tc, ok := c.UnderlyingConn().(interface{ CloseWrite() error }); ok {
				tc.CloseWrite()
			} else {
				c.Conn.Close()
			}
			return
		default:
		}
		var m outMsg
		var ok bool
		select {
		case <-c.drop:
			continue
		case m, ok = <-c.out:
		}
		if !ok {
			return
		}
		// Write m and whatever else is queued already in one batch.
		c.batch.begin()
		var err error
		for more := true; more; {
			if m.close {
				err = c.Conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(m.code, m.closeText), time.Now().Add(closeWait))
			} else {
				c.mu.Lock()
				c.queued -= len(m.data)
				c.mu.Unlock()
				err = c.Conn.WriteMessage(websocket.TextMessage, m.data)
			}
			if err != nil || c.batch.full() {
				break
			}
			select {
			case m, more = <-c.out:
			default:
				more = false
			}
		}
		if ferr := c.batch.flush(time.Now().Add(writeWait)); err == nil {
			err = ferr
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				c.dropSlow(fmt.Sprintf("a write not taken in %v", writeWait), 0)
			}
			c.Conn.Close()
			return
		}
	}
}

// enqueue queues m for writeLoop without waiting; a full queue drops the
// client.
func (c *gorillaConn) enqueue(m outMsg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outClosed || c.writerGone {
		return net.ErrClosed
	}
	if c.queued+len(m.data) > sendQueueBytes {
		c.dropSlow(fmt.Sprintf("%d bytes waiting to be sent", c.queued), writeWait)
		return errDropped
	}
	select {
	case c.out <- m:
		c.queued += len(m.data)
		return nil
	default:
		c.dropSlow(fmt.Sprintf("%d messages waiting to be sent", len(c.out)), writeWait)
		return errDropped
	}
}

// NextReader reports a peer's normal close as transport.ErrWebsocketClosed.
func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	mt, r, err := c.Conn.NextReader()
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
		return mt, r, transport.ErrWebsocketClosed
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return mt, r, transport.ErrWebsocketClosed
	}
	return mt, r, err
}

// WriteJSON queues one message for the writer.
func (c *gorillaConn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.enqueue(outMsg{data: b})
}

// WriteClose queues a close frame after the messages before it. During
// shutdown gqlgen's normal closure goes out as 1001 "going away", so
// clients know to reconnect.
func (c *gorillaConn) WriteClose(code int, msg string) error {
	if c.ws.closing.Load() && code == websocket.CloseNormalClosure {
		code, msg = websocket.CloseGoingAway, "server shutting down"
	}
	return c.enqueue(outMsg{close: true, code: code, closeText: msg})
}

// Close closes the connection once, after the writer sent what was
// queued, for up to closeWait.
func (c *gorillaConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		c.mu.Lock()
		c.outClosed = true
		close(c.out)
		c.mu.Unlock()
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
