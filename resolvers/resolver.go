// Package resolvers implements the GraphQL schema. Resolvers own nothing:
// each field is a call into the package that owns its data, through the
// interfaces of services.go (so a test can serve the schema on fakes), and
// a run's trace through the response's loader (loader.go), a page's
// traces in one call.
package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph/model"
	"github.com/cascade-sim/cascade/sampling"
)

// Resolver is the root resolver; its fields are the packages the API
// calls into, each behind an interface of what the API asks of it (see
// services.go).
type Resolver struct {
	DB           Store
	Events       *events.Broker
	Traces       TraceService
	Postproc     LogSource      // post-processing logs
	Runs         Launcher       // launches and cancels runs
	Sweeps       SweepLauncher  // launches and cancels sweeps
	RunLogs      LogSource      // simulator logs
	Configs      SimConfigs     // the configs runs launch with
	Exec         ExecutorHealth // where runs execute
	Results      RunResults     // what runs gave back
	Comparisons  Comparisons    // runs compared by config and sweep
	Correlations Correlations   // runs' statistics against hardware counters
	SampledRuns  SampledLauncher
	Disk         DiskMeter
	Sampling     Planner
	// S3 is the S3 endpoint; nil when the server runs without one.
	S3 *cascade.S3Endpoint
}

// page is the page a connection field asks for: first items, or
// cascade.DefaultPageSize without first (first: 0 asks for none, for a
// count alone). It asks for a count only when the query selects
// totalCount: counting may read every row.
func page(ctx context.Context, first *int, after *string) cascade.Page {
	p := cascade.Page{First: cascade.DefaultPageSize, After: cascade.Deref(after)}
	if first != nil {
		p.First = *first
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return p
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{fc.Field.Definition.Type.Name()}) {
		if f.Name == "totalCount" {
			p.Count = true
		}
	}
	return p
}

// subscribe adapts a broker subscription to a GraphQL subscription channel:
// convert turns an event into a value to send, or reports false to skip
// it. The goroutine ends, and the channel closes, when ctx is done or the
// broker drops a subscriber that fell too far behind (its client then
// resubscribes and refetches).
func subscribe[T any](ctx context.Context, b *events.Broker, match func(cascade.Event) bool, convert func(cascade.Event) (T, bool)) <-chan T {
	return stream(ctx, b.Subscribe(ctx, match), nil, convert)
}

// follow is subscribe for a subscription to one row, which starts with
// the row's current state: neither websocket protocol acknowledges a
// subscribe, so a client cannot know when to read the state itself without
// missing a change. The broker registers the subscription before current
// reads the row, so a change committed in between is queued; queued events
// older than the row read (by updatedAt) are skipped. A row that does not
// exist yet (NOT_FOUND) sends nothing until it appears.
func follow[T any](ctx context.Context, b *events.Broker, match func(cascade.Event) bool, convert func(cascade.Event) (T, bool),
	current func() (T, error), updatedAt func(T) time.Time) (<-chan T, error) {
	sub := b.Subscribe(ctx, match)
	first, err := current()
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return stream(ctx, sub, nil, convert), nil
	}
	if err != nil {
		return nil, err
	}
	since := updatedAt(first)
	return stream(ctx, sub, &first, func(e cascade.Event) (T, bool) {
		v, ok := convert(e)
		return v, ok && !updatedAt(v).Before(since)
	}), nil
}

// stream sends first (when not nil), then each converted event of sub.
func stream[T any](ctx context.Context, sub *events.Subscription, first *T, convert func(cascade.Event) (T, bool)) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		if first != nil {
			select {
			case out <- *first:
			case <-ctx.Done():
				return
			}
		}
		for {
			e, err := sub.Next(ctx)
			if err != nil {
				return
			}
			v, ok := convert(e)
			if !ok {
				continue
			}
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// notFoundIsNil turns a NOT_FOUND error into a null result.
func notFoundIsNil[T any](v T, err error) (*T, error) {
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// runPage is a page of runs as a connection.
func (r *Resolver) runPage(ctx context.Context, f cascade.RunFilter, first *int, after *string) (*model.RunConnection, error) {
	p, err := r.DB.Runs(ctx, f, page(ctx, first, after))
	if err != nil {
		return nil, err
	}
	if l := tracesLoader(ctx); l != nil && len(p.Items) > 0 && selectsRunTrace(ctx) {
		ids := make([]string, len(p.Items))
		for i := range p.Items {
			ids[i] = p.Items[i].TraceID
		}
		l.prime(ids)
	}
	c := &model.RunConnection{Nodes: p.Items, TotalCount: int(p.Total), PageInfo: &model.PageInfo{HasNextPage: p.HasNext}, Edges: []model.RunEdge{}}
	for i := range p.Items {
		c.Edges = append(c.Edges, model.RunEdge{Cursor: cascade.Cursor(p.Items[i].Seq), Node: &p.Items[i]})
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return c, nil
}

// logTail returns up to lines (default 20, at most 1000) last lines of
// the log of id that src keeps; none when it does not exist yet.
func logTail(src interface {
	LogLines(id string, n int) ([]string, error)
}, id string, lines *int) ([]string, error) {
	n := 20
	if lines != nil {
		n = max(0, min(*lines, 1000))
	}
	return src.LogLines(id, n)
}

// nonEmpty is nil for "", else a pointer to s.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// strata are a plan's strata: its own when it has them (a plan just
// made), else the store's.
func (r *Resolver) strata(ctx context.Context, p *cascade.SamplingPlan) ([]cascade.SamplingStratum, error) {
	if p.Strata != nil {
		return p.Strata, nil
	}
	s, err := r.Sampling.SamplingStrata(ctx, p.ID)
	if s == nil {
		s = []cascade.SamplingStratum{}
	}
	return s, err
}

// withStrata is a copy of p with its strata.
func (r *Resolver) withStrata(ctx context.Context, p *cascade.SamplingPlan) (cascade.SamplingPlan, error) {
	s, err := r.strata(ctx, p)
	if err != nil {
		return cascade.SamplingPlan{}, err
	}
	c := *p
	c.Strata = s
	return c, nil
}

// traceRanges is what to trace of plan c's trace (c with its strata),
// with the launches its segments' L2 warming reads under simConfig's L2
// unless warming is false, and the L2 taken ("" for none).
func (r *Resolver) traceRanges(ctx context.Context, c cascade.SamplingPlan, simConfig *string, warming *bool) ([]cascade.KernelRange, string, string, error) {
	if warming != nil && !*warming {
		if simConfig != nil {
			return nil, "", "", cascade.Errorf(cascade.EINVALID, "simConfig: names the L2 whose warming to trace; give it with warming true, or leave it out")
		}
		ranges := sampling.Ranges(c)
		if ranges == nil {
			ranges = []cascade.KernelRange{}
		}
		return ranges, "", "", nil
	}
	ranges, l2, note, err := r.Sampling.TraceRangesNoted(ctx, c, cascade.Deref(simConfig))
	if ranges == nil && err == nil {
		ranges = []cascade.KernelRange{}
	}
	return ranges, l2, note, err
}
