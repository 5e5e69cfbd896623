package graph

import (
	"errors"
	"io"
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

// gorillaWebsockets plugs gorilla/websocket into gqlgen's websocket
// transport and keeps the set of open connections, so shutdown can close
// each with a close frame.
type gorillaWebsockets struct {
	upgrader websocket.Upgrader
	ping     time.Duration

	closing atomic.Bool
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
	c, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	conn := &gorillaConn{Conn: c, ws: g, done: make(chan struct{})}
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
	for _, c := range conns {
		c.WriteClose(websocket.CloseGoingAway, "server shutting down")
		c.Close()
	}
}

// gorillaConn adapts *websocket.Conn to transport.WebsocketConn. gqlgen
// serialises its writes; WriteControl and Close may run beside them.
type gorillaConn struct {
	*websocket.Conn
	ws        *gorillaWebsockets
	done      chan struct{}
	closeOnce sync.Once
	lastPong  atomic.Int64
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
				c.Conn.Close() // the reader fails and gqlgen ends the connection
				return
			}
			c.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
		}
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

// WriteJSON writes one message, giving up on a client that stopped reading.
func (c *gorillaConn) WriteJSON(v any) error {
	c.SetWriteDeadline(time.Now().Add(writeWait))
	return c.Conn.WriteJSON(v)
}

// WriteClose sends a close frame. During shutdown gqlgen's normal closure
// goes out as 1001 "going away", so clients know to reconnect.
func (c *gorillaConn) WriteClose(code int, msg string) error {
	if c.ws.closing.Load() && code == websocket.CloseNormalClosure {
		code, msg = websocket.CloseGoingAway, "server shutting down"
	}
	return c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, msg), time.Now().Add(closeWait))
}

// Close closes the connection once.
func (c *gorillaConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		err = c.Conn.Close()
		c.ws.mu.Lock()
		delete(c.ws.conns, c)
		c.ws.idle.Broadcast()
		c.ws.mu.Unlock()
	})
	return err
}
