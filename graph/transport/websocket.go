package transport

import (
	"errors"
	"log/slog"
	"net/http"
	"runtime"
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
	upgrader  websocket.Upgrader
	ping      time.Duration
	writeWait time.Duration
	log       *slog.Logger

	// Connections with messages the hub queued, waiting for a flusher;
	// up to GOMAXPROCS flushers run while there are any.
	flushMu  sync.Mutex
	flushQ   []*gorillaConn
	flushers int

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
	hj := &wireHijacker{ResponseWriter: w}
	c, err := up.Upgrade(hj, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	conn := &gorillaConn{Conn: c, ws: g, wire: hj.conn, done: make(chan struct{}),
		wake: make(chan struct{}, 1), written: make(chan struct{}), drop: make(chan struct{})}
	conn.next = nextFrameSuffix(c.Subprotocol())
	conn.errorEnds = c.Subprotocol() == "graphql-transport-ws"
	hj.conn.attach(conn)
	if slot, ok := r.Context().Value(connSlotKey{}).(*connSlot); ok {
		slot.conn = conn
	}
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

// flushLater has flushers write what is queued for conns: while they
// are busy, more messages queue behind, and each write then carries
// several; under load a message costs less, not more.
func (g *gorillaWebsockets) flushLater(conns []*gorillaConn) {
	if len(conns) == 0 {
		return
	}
	g.flushMu.Lock()
	g.flushQ = append(g.flushQ, conns...)
	start := min(runtime.GOMAXPROCS(0), len(g.flushQ)) - g.flushers
	g.flushers += max(start, 0)
	g.flushMu.Unlock()
	for range start {
		go g.flushLoop()
	}
}

// flushLoop is a flusher: it flushes queued connections until none is
// left.
func (g *gorillaWebsockets) flushLoop() {
	var batch []*gorillaConn
	for {
		g.flushMu.Lock()
		if len(g.flushQ) == 0 {
			g.flushers--
			g.flushQ = nil
			g.flushMu.Unlock()
			return
		}
		n := min(len(g.flushQ), 32)
		batch = append(batch[:0], g.flushQ[:n]...)
		g.flushQ = g.flushQ[n:]
		g.flushMu.Unlock()
		for _, c := range batch {
			c.flush()
		}
	}
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
