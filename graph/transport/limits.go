package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Limits bound what one client can ask of the server. A zero field takes
// its default; a negative one turns that limit off.
type Limits struct {
	// MaxDepth is how deeply an operation's fields may nest (a field at the
	// root is at depth 1; fragments count where they are spread).
	MaxDepth int
	// MaxComplexity bounds an operation's cost: each field costs 1 plus
	// what it selects, and a page (traces, runs, sweeps, a trace's kernels
	// or runs, a sweep's runs) costs its selection times the page size asked
	// for (first, else cascade.DefaultPageSize), as package graph prices
	// them.
	MaxComplexity int
	// MaxTokens bounds the GraphQL document's size in lexical tokens, before
	// it is validated at all.
	MaxTokens int
	// MaxSubscriptionsPerConn is how many subscriptions one websocket may
	// hold at once.
	MaxSubscriptionsPerConn int
	// MaxConnsPerClient is how many websockets one client address may hold
	// open at once. Behind a reverse proxy every client has the proxy's
	// address: raise it there.
	MaxConnsPerClient int
}

// The defaults fit the web UI and GraphiQL with room to spare: graphql-js's
// introspection query, which GraphiQL sends, nests 15 deep; the UI's
// largest query, a 2000-kernel chunk of a trace, costs about 40,000.
const (
	DefaultMaxDepth                = 20
	DefaultMaxComplexity           = 200_000
	DefaultMaxTokens               = 15_000
	DefaultMaxSubscriptionsPerConn = 100
	DefaultMaxConnsPerClient       = 64
)

// Error codes of the limits, in extensions.code.
const (
	codeDepth         = "DEPTH_LIMIT_EXCEEDED"
	codeSubscriptions = "TOO_MANY_SUBSCRIPTIONS"
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxComplexity, DefaultMaxComplexity)
	def(&l.MaxTokens, DefaultMaxTokens)
	def(&l.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	def(&l.MaxConnsPerClient, DefaultMaxConnsPerClient)
	return l
}

// depthLimit refuses operations that nest deeper than max: cost grows
// with depth where types refer to each other (a run's trace's runs' ...).
// Introspection, whose types refer to each other without end and whose
// lists no complexity prices, is bounded by the validator besides: it
// refuses __Type's lists (fields, interfaces, ...) nested three deep.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if n := selectionDepth(opCtx.Operation.SelectionSet, map[string]int{}); n > d.max {
		err := gqlerror.Errorf("operation nests %d fields deep, more than the limit of %d", n, d.max)
		setCode(err, codeDepth)
		return err
	}
	return nil
}

// selectionDepth is the depth of the deepest field under set. Validation
// has refused fragment cycles already; memo holds each fragment's depth so
// a fragment spread many times is walked once.
func selectionDepth(set ast.SelectionSet, memo map[string]int) int {
	deepest := 0
	for _, sel := range set {
		var n int
		switch s := sel.(type) {
		case *ast.Field:
			n = 1 + selectionDepth(s.SelectionSet, memo)
		case *ast.InlineFragment:
			n = selectionDepth(s.SelectionSet, memo)
		case *ast.FragmentSpread:
			var ok bool
			if n, ok = memo[s.Name]; !ok && s.Definition != nil {
				memo[s.Name] = 0 // a cycle, were there one, stops here
				n = selectionDepth(s.Definition.SelectionSet, memo)
				memo[s.Name] = n
			}
		}
		deepest = max(deepest, n)
	}
	return deepest
}

// connState is what a websocket connection keeps beside gqlgen's own: the
// contexts of the subscriptions it holds.
type connState struct {
	mu   sync.Mutex
	subs []context.Context
}

// hold counts ctx among the connection's subscriptions, unless it holds max
// already. A subscription counts until its context ends. gqlgen's transport
// cancels it when the client stops it, before it reads the client's next
// message, and starts each subscription (which is when hold runs) on a
// goroutine of its own afterwards: a client that stops one and starts
// another at once finds room. (A counter decremented when the context ended
// was not: context.AfterFunc runs later, on another goroutine.)
func (st *connState) hold(ctx context.Context, max int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.subs = slices.DeleteFunc(st.subs, func(c context.Context) bool { return c.Err() != nil })
	if len(st.subs) >= max {
		return false
	}
	st.subs = append(st.subs, ctx)
	return true
}

type connStateKey struct{}

// subscriptionLimit refuses a websocket's subscription beyond its max.
type subscriptionLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = subscriptionLimit{}

func (subscriptionLimit) ExtensionName() string                   { return "SubscriptionLimit" }
func (subscriptionLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (l subscriptionLimit) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	st, _ := ctx.Value(connStateKey{}).(*connState)
	op := graphql.GetOperationContext(ctx).Operation
	if st == nil || op.Operation != ast.Subscription {
		return next(ctx)
	}
	if !st.hold(ctx, l.max) {
		err := gqlerror.Errorf("this connection holds %d subscriptions, the most one may: stop one first, or open another connection", l.max)
		setCode(err, codeSubscriptions)
		// The transport answers with an error message for this id.
		transport.AddSubscriptionError(ctx, err)
		return func(context.Context) *graphql.Response { return nil }
	}
	return next(ctx)
}

// clientConns counts each client address's open websockets.
type clientConns struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// acquire takes a connection slot for addr, or reports false when it has
// max already.
func (c *clientConns) acquire(addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[addr] >= c.max {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[addr]++
	return true
}

func (c *clientConns) release(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[addr]--; c.n[addr] <= 0 {
		delete(c.n, addr)
	}
}

// refuseWebsocket completes the handshake only to close at once with a
// 1013 (try again later) frame saying why: a browser's websocket sees a
// close reason, never an HTTP status, and graphql-ws clients retry 1013
// with backoff, so a client gets in once the address's other connections
// close.
func refuseWebsocket(w http.ResponseWriter, r *http.Request, up websocket.Upgrader, reason string) {
	up.Subprotocols = []string{"graphql-transport-ws", "graphql-ws"}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered with an HTTP error
	}
	defer c.Close()
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, reason), time.Now().Add(closeWait))
	// Wait for the client's close frame, so ours is not lost to a reset.
	c.SetReadDeadline(time.Now().Add(closeWait))
	for {
		if _, _, err := c.NextReader(); err != nil {
			return
		}
	}
}

func tooManyConns(addr string, max int) string {
	return fmt.Sprintf("too many websockets from %s: at most %d at once", addr, max)
}
