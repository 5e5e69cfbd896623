package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cascade-sim/cascade"
)

// Options configures the transports.
type Options struct {
	// AllowedOrigins are origins, besides the server's own, whose pages may
	// open websockets and send requests ("http://localhost:5173").
	AllowedOrigins []string
	// Logger logs dropped clients and websocket errors; nil discards.
	Logger *slog.Logger
	// PingInterval overrides the websocket keep-alive interval (tests).
	PingInterval time.Duration
	// WriteWait overrides how long a websocket client may take nothing
	// before it is dropped (tests).
	WriteWait time.Duration
	// Tokens, when set, are needed for every operation (see cascade.Tokens).
	Tokens cascade.Tokens
	Limits Limits
}

// Server is the GraphQL endpoint: GraphQL over HTTP by its spec (POST for
// queries and mutations, GET for queries only; see [httpTransport]), and
// websockets (graphql-transport-ws and the legacy graphql-ws) for
// subscriptions. It is safe for concurrent use.
type Server struct {
	http.Handler
	ws       *gorillaWebsockets
	hub      *hub
	wsCtx    context.Context
	wsCancel context.CancelFunc
}

// New serves h, a handler of an executable schema with its error
// presenter set: it adds to h the transports (websockets, GraphQL over
// HTTP, OPTIONS), the parser's token limit and the extensions that guard
// operations (the access check, the depth and complexity limits, the
// subscriptions per connection) and share them (the hub, last), and wraps
// it in the checks of each request's origin, token and, for a websocket,
// its client's connections. Extensions h has already come before those.
func New(h *handler.Server, opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ping := opts.PingInterval
	if ping <= 0 {
		ping = pingInterval
	}
	ww := opts.WriteWait
	if ww <= 0 {
		ww = writeWait
	}
	limits := opts.Limits.withDefaults()
	ws := &gorillaWebsockets{
		ping:      ping,
		writeWait: ww,
		log:       log,
		upgrader: websocket.Upgrader{
			CheckOrigin:    func(r *http.Request) bool { return originAllowed(r, opts.AllowedOrigins) },
			ReadBufferSize: 4096,
			// Messages are framed by gorillaConn; the library frames only
			// control frames, and takes a buffer from the pool for that.
			WriteBufferPool: &sync.Pool{},
		},
	}
	h.AddTransport(transport.Websocket{
		Implementation:        ws,
		InitFunc:              initFunc(opts.Tokens),
		KeepAlivePingInterval: 10 * time.Second, // graphql-ws "ka" messages
		InitTimeout:           30 * time.Second,
		ErrorFunc: func(ctx context.Context, err error) {
			if errors.Is(err, errDropped) || errors.Is(err, net.ErrClosed) {
				return // a dropped client is logged once, by dropSlow
			}
			log.Debug("websocket", "err", err)
		},
	})
	h.AddTransport(transport.Options{})
	h.AddTransport(httpTransport{})
	if limits.MaxTokens > 0 {
		h.SetParserTokenLimit(limits.MaxTokens)
	}
	h.Use(accessCheck{})
	if limits.MaxDepth > 0 {
		h.Use(depthLimit{max: limits.MaxDepth})
	}
	if limits.MaxComplexity > 0 {
		h.Use(extension.FixedComplexityLimit(limits.MaxComplexity))
	}
	if limits.MaxSubscriptionsPerConn > 0 {
		h.Use(subscriptionLimit{max: limits.MaxSubscriptionsPerConn})
	}
	// Last: the limits above apply to each subscription, shared or not.
	hub := &hub{}
	h.Use(hub)
	conns := &clientConns{max: limits.MaxConnsPerClient}
	wsCtx, wsCancel := context.WithCancel(context.Background())
	s := &Server{ws: ws, hub: hub, wsCtx: wsCtx, wsCancel: wsCancel}
	s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" && !originAllowed(r, opts.AllowedOrigins) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		// A request's role comes from its Authorization header. A websocket
		// may present its token in connection_init instead (browsers cannot
		// set headers on one), so only an invalid header refuses it here.
		role := opts.Tokens.AuthorizationRole(r.Header.Get("Authorization"))
		upgrade := websocket.IsWebSocketUpgrade(r)
		if role == cascade.RoleNone && r.Method != http.MethodOptions && (!upgrade || r.Header.Get("Authorization") != "") {
			refuseUnauthenticated(w, r)
			return
		}
		ctx := cascade.ContextWithRole(r.Context(), role)
		if upgrade {
			if limits.MaxConnsPerClient > 0 {
				addr := clientAddr(r)
				if !conns.acquire(addr) {
					refuseWebsocket(w, r, ws.upgrader, tooManyConns(addr, limits.MaxConnsPerClient))
					return
				}
				// The transport serves the connection within this call.
				defer conns.release(addr)
			}
			// A websocket lives until its client leaves or Shutdown.
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			stop := context.AfterFunc(s.wsCtx, cancel)
			defer stop()
			ctx = context.WithValue(ctx, connSlotKey{}, &connSlot{})
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
	return s
}

// Shutdown closes every websocket with a close frame (1001, going away)
// and waits for them, until ctx is done; then it drops those left.
func (s *Server) Shutdown(ctx context.Context) {
	s.ws.closing.Store(true)
	s.wsCancel()
	done := make(chan struct{})
	go func() { s.ws.wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.ws.closeAll()
	}
}

// DroppedClients is how many websocket clients were dropped for not
// reading (a full send queue, a write or a ping unanswered in time). Each
// drop is also logged, with this count.
func (s *Server) DroppedClients() int64 { return s.ws.dropped.Load() }

// SharedSubscriptions is how many subscriptions are served by another's
// execution (see hub): with the broker's subscribers, how many are live.
func (s *Server) SharedSubscriptions() int {
	return max(0, int(s.hub.members.Load()-s.hub.groups.Load()))
}

// originAllowed accepts requests without an Origin (scripts, curl), from
// the server's own origin, and from the configured ones.
func originAllowed(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.ContainsFunc(allowed, func(a string) bool { return a == "*" || strings.EqualFold(strings.TrimRight(a, "/"), origin) })
}

// setCode sets an error's extensions.code.
func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}
