package transport

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cascade-sim/cascade"
)

// hub shares identical subscriptions. Subscriptions over websockets with
// the same document, operation, variables and role form a group that runs
// one execution: each event is resolved and encoded to JSON once, and
// each member's message is that encoding with the member's id spliced in,
// queued straight onto its connection (see gorillaConn.queueNext). A
// thousand subscribers of traceUpdated cost one execution and a thousand
// small copies per event, not a thousand executions.
//
// A group starts with its first member and ends when its last one leaves
// or its stream ends (every member then gets complete). Only the root
// fields in shareable are shared; the logs, which start with what is
// there already, are not. A member that joins a running group of a
// subscription that starts with the current state (traceUpdated with an
// id, say) gets the group's latest message first: every message of those
// is the whole state, so it is what a subscription of its own would have
// sent first, and it misses nothing after it.
type hub struct {
	mu   sync.Mutex
	live map[string]*group
	// members counts the members of live groups, groups the live groups:
	// members beyond one a group are served by another's execution (see
	// Server.SharedSubscriptions).
	members, groups atomic.Int64
}

// shareable says which root subscription fields are shared, and whether,
// given its arguments, a subscription starts with the current state.
var shareable = map[string]func(args map[string]any) (startsWithState bool){
	"traceUpdated":    func(a map[string]any) bool { return a["id"] != nil },
	"runUpdated":      func(a map[string]any) bool { return a["id"] != nil },
	"executorUpdated": func(map[string]any) bool { return true },
	"traceRemoved":    func(map[string]any) bool { return false },
	"runRemoved":      func(map[string]any) bool { return false },
}

type group struct {
	key    string
	replay bool          // members joining late get latest first
	live   chan struct{} // closed once the execution subscribed
	cancel context.CancelFunc

	mu      sync.Mutex
	members map[*member]struct{}
	latest  []byte // the last message's head (see queueNext), when replay
	ended   bool
}

var errNoLatest = errors.New("no message yet")

type member struct {
	conn  *gorillaConn
	id    []byte        // JSON string
	ended chan struct{} // closed when the group's stream ended
}

// connSlot is what the hub knows of a websocket: its connection (set by
// Accept) and the ids of the subscriptions being started on it.
type connSlot struct {
	conn *gorillaConn
	mu   sync.Mutex
	ids  map[*graphql.OperationContext]string
}

type connSlotKey struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = (*hub)(nil)

func (*hub) ExtensionName() string                   { return "SubscriptionHub" }
func (*hub) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext notes the id of a subscription being started.
// gqlgen reads a message and creates its operation on one goroutine, the
// connection's reader, so the last message read is this operation's;
// its query must match, else it is not shared.
func (h *hub) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	slot, _ := ctx.Value(connSlotKey{}).(*connSlot)
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription || slot == nil || slot.conn == nil {
		return nil
	}
	if id, query := slot.conn.lastSubscribe(); id != "" && query == opCtx.RawQuery {
		slot.mu.Lock()
		if slot.ids == nil {
			slot.ids = map[*graphql.OperationContext]string{}
		}
		slot.ids[opCtx] = id
		slot.mu.Unlock()
	}
	return nil
}

// InterceptOperation serves a shareable subscription from its group.
func (h *hub) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	slot, _ := ctx.Value(connSlotKey{}).(*connSlot)
	if opCtx.Operation.Operation != ast.Subscription || slot == nil {
		return next(ctx)
	}
	slot.mu.Lock()
	id, ok := slot.ids[opCtx]
	delete(slot.ids, opCtx)
	slot.mu.Unlock()
	if !ok {
		return next(ctx)
	}
	fields := graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Subscription"})
	if len(fields) != 1 {
		return next(ctx)
	}
	startsWithState, ok := shareable[fields[0].Name]
	if !ok {
		return next(ctx)
	}
	vars, err := json.Marshal(opCtx.Variables) // map keys sorted: one encoding per value
	if err != nil {
		return next(ctx)
	}
	key := strconv.Itoa(int(cascade.RoleFromContext(ctx))) + "\x00" + opCtx.OperationName + "\x00" + opCtx.RawQuery + "\x00" + string(vars)
	m := &member{conn: slot.conn, id: strconv.AppendQuote(nil, id), ended: make(chan struct{})}
	if !json.Valid(m.id) {
		return next(ctx) // strconv quoted it in a way JSON does not read
	}
	done := false
	return func(context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		g, first := h.join(key, m, startsWithState(fields[0].ArgumentMap(opCtx.Variables)))
		if first {
			gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			g.cancel = cancel
			responses := next(gctx)
			h.members.Add(1)
			h.groups.Add(1)
			close(g.live)
			go h.run(g, gctx, responses)
		} else {
			select {
			case <-g.live:
			case <-ctx.Done():
			}
			h.members.Add(1)
		}
		select {
		case <-ctx.Done():
		case <-m.ended:
		}
		h.members.Add(-1)
		h.leave(g, m)
		return nil
	}
}

// join adds m to the group of key, starting the group when there is none.
func (h *hub) join(key string, m *member, replay bool) (g *group, first bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g = h.live[key]; g == nil {
		g = &group{key: key, replay: replay, live: make(chan struct{}), members: map[*member]struct{}{}}
		if h.live == nil {
			h.live = map[string]*group{}
		}
		h.live[key] = g
		first = true
	}
	g.mu.Lock()
	g.members[m] = struct{}{}
	var err error = errNoLatest
	if g.latest != nil {
		_, err = m.conn.queueNext(g.latest, m.id)
	}
	g.mu.Unlock()
	if err == nil {
		m.conn.flush()
	}
	return g, first
}

// leave takes m out of g; the last member out ends the group.
func (h *hub) leave(g *group, m *member) {
	h.mu.Lock()
	g.mu.Lock()
	delete(g.members, m)
	last := len(g.members) == 0 && h.endLocked(g)
	g.mu.Unlock()
	h.mu.Unlock()
	if last {
		<-g.live
		h.groups.Add(-1)
		g.cancel()
	}
}

// endLocked ends g, unless it ended already: no one joins it any more.
func (h *hub) endLocked(g *group) bool {
	if g.ended {
		return false
	}
	g.ended = true
	if h.live[g.key] == g {
		delete(h.live, g.key)
	}
	return true
}

// run sends each response of g's execution to every member.
func (h *hub) run(g *group, ctx context.Context, responses graphql.ResponseHandler) {
	var head []byte
	var conns []*gorillaConn
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		data, err := json.Marshal(resp)
		if err != nil {
			panic(err) // as gqlgen's transport does
		}
		head = append(append(append(head[:0], `{"payload":`...), data...), `,"id":`...)
		g.mu.Lock()
		if g.replay && len(resp.Errors) == 0 {
			g.latest = append(g.latest[:0], head...)
		}
		conns = conns[:0]
		for m := range g.members {
			if schedule, err := m.conn.queueNext(head, m.id); err == nil && schedule {
				conns = append(conns, m.conn)
			}
		}
		g.mu.Unlock()
		if len(conns) > 0 {
			conns[0].ws.flushLater(conns)
		}
	}
	h.mu.Lock()
	g.mu.Lock()
	ended := h.endLocked(g)
	for m := range g.members {
		close(m.ended)
	}
	g.members = map[*member]struct{}{}
	g.mu.Unlock()
	h.mu.Unlock()
	if ended {
		h.groups.Add(-1)
	}
	g.cancel()
}
