package resolvers

import (
	"context"
	"errors"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/graph"
)

var _ graph.Loaders = (*Resolver)(nil)

type loadersKey struct{}

// WithLoaders returns ctx with the loaders of one response (see
// graph.Loaders): a trace loader, which batches Run.trace, the
// statistics tables of the runs whose kernels it lists (stats.go), and
// the kernel counters of the kernels it lists (counters.go).
func (r *Resolver) WithLoaders(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, statTablesKey{}, &statTables{byRun: map[string]*simstats.Table{}})
	ctx = withCounterCache(ctx)
	return context.WithValue(ctx, loadersKey{}, &traceLoader{store: r.DB, batches: map[string]*traceBatch{}})
}

// tracesLoader is the response's trace loader; nil outside a server built
// by graph.NewServer.
func tracesLoader(ctx context.Context) *traceLoader {
	l, _ := ctx.Value(loadersKey{}).(*traceLoader)
	return l
}

// traceLoader loads one response's traces by id in batches. A page of runs
// whose traces the query selects primes it with their trace ids
// (runPage); the first of the page's Run.trace fields to load fetches
// every primed id in one TracesByID call, and the others find their trace
// in that batch, waiting for it if need be. An id nobody primed is fetched
// with those primed, or alone. Traces are kept for the response only: each
// event of a subscription has a loader of its own, so none sees a trace
// older than its event.
type traceLoader struct {
	store TraceStore

	mu      sync.Mutex
	primed  []string               // ids to fetch with the next batch
	batches map[string]*traceBatch // each id asked for: the batch that reads it
}

// traceBatch is one TracesByID call and what it found.
type traceBatch struct {
	done   chan struct{} // closed when traces and err are set
	traces map[string]cascade.Trace
	err    error
}

var errBatchAborted = errors.New("load traces: the batch's read ended without an answer")

// prime notes ids that are about to be loaded, so one batch reads them all.
func (l *traceLoader) prime(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, ok := l.batches[id]; !ok {
			l.primed = append(l.primed, id)
		}
	}
}

// load returns the trace with the given id, or a NOT_FOUND error.
func (l *traceLoader) load(ctx context.Context, id string) (cascade.Trace, error) {
	l.mu.Lock()
	b, ok := l.batches[id]
	if !ok {
		b = &traceBatch{done: make(chan struct{})}
		var ids []string
		for _, p := range append(l.primed, id) {
			if _, ok := l.batches[p]; !ok {
				l.batches[p] = b
				ids = append(ids, p)
			}
		}
		l.primed = nil
		l.mu.Unlock()
		b.fetch(ctx, l.store, ids)
	} else {
		l.mu.Unlock()
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return cascade.Trace{}, ctx.Err()
	}
	if b.err != nil {
		return cascade.Trace{}, b.err
	}
	t, ok := b.traces[id]
	if !ok {
		return t, cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
	}
	return t, nil
}

// fetch reads the batch's traces; whatever happens, it ends the batch.
func (b *traceBatch) fetch(ctx context.Context, store TraceStore, ids []string) {
	defer close(b.done)
	b.err = errBatchAborted
	ts, err := store.TracesByID(ctx, ids)
	b.traces = make(map[string]cascade.Trace, len(ts))
	for _, t := range ts {
		b.traces[t.ID] = t
	}
	b.err = err
}

// selectsRunTrace reports whether the runs connection being resolved
// selects its runs' trace: nodes { trace } or edges { node { trace } }.
func selectsRunTrace(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return false
	}
	opCtx := graphql.GetOperationContext(ctx)
	hasTrace := func(run graphql.CollectedField) bool {
		for _, f := range graphql.CollectFields(opCtx, run.Selections, []string{"Run"}) {
			if f.Name == "trace" {
				return true
			}
		}
		return false
	}
	for _, f := range graphql.CollectFields(opCtx, fc.Field.Selections, []string{"RunConnection"}) {
		switch f.Name {
		case "nodes":
			if hasTrace(f) {
				return true
			}
		case "edges":
			for _, e := range graphql.CollectFields(opCtx, f.Selections, []string{"RunEdge"}) {
				if e.Name == "node" && hasTrace(e) {
					return true
				}
			}
		}
	}
	return false
}
