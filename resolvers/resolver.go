// Package resolvers implements the GraphQL schema. Resolvers own nothing:
// each field is a call into the package that owns its data.
package resolvers

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/events"
)

// Resolver is the root resolver; its fields are the packages the API
// calls into.
type Resolver struct {
	DB       *db.DB
	Events   *events.Broker
	Traces   TraceService
	Postproc LogSource
}

// TraceService is what the API asks of the scanner.
type TraceService interface {
	Retry(ctx context.Context, id string) (cascade.Trace, error)
}

// LogSource says where a trace's post-processing log is.
type LogSource interface {
	LogPath(traceID string) string
}

func page(first *int, after *string) db.Page {
	return db.Page{First: cascade.Deref(first), After: cascade.Deref(after)}
}

// subscribe adapts a broker subscription to a GraphQL subscription channel:
// convert turns an event into a value to send, or reports false to skip
// it. The goroutine ends, and the channel closes, when ctx is done or the
// broker drops a subscriber that fell too far behind (its client then
// resubscribes and refetches).
func subscribe[T any](ctx context.Context, b *events.Broker, match func(events.Event) bool, convert func(events.Event) (T, bool)) <-chan T {
	sub := b.Subscribe(ctx, match)
	out := make(chan T)
	go func() {
		defer close(out)
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
