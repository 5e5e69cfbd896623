package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/graph/transport"
)

// Loaders is implemented by a ResolverRoot whose resolvers batch their
// loads (package resolvers does): NewServer runs each response, a query's,
// a mutation's or one event's of a subscription, in the context
// WithLoaders returns, so the loads of one response are batched together
// and nothing loaded outlives it.
type Loaders interface {
	WithLoaders(ctx context.Context) context.Context
}

// NewServer builds the GraphQL endpoint around the resolvers: the
// executable schema, priced by complexity, with its caches, introspection,
// persisted queries, the one error presenter, the panic handler and the
// resolvers' loaders (see Loaders), served by package transport with
// opts.
func NewServer(resolvers ResolverRoot, opts transport.Options) *transport.Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "graphql")
	opts.Logger = log
	h := handler.New(NewExecutableSchema(Config{Resolvers: resolvers, Complexity: complexity()}))
	h.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	h.Use(extension.Introspection{})
	h.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	h.SetErrorPresenter(presentError(log))
	h.SetRecoverFunc(func(ctx context.Context, p any) error {
		log.Error("panic in resolver", "path", graphql.GetPath(ctx).String(), "panic", p, "stack", string(debug.Stack()))
		return errors.New("panic") // presented as INTERNAL
	})
	if l, ok := resolvers.(Loaders); ok {
		h.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
			return next(l.WithLoaders(ctx))
		})
	}
	return transport.New(h, opts)
}

// presentError is the one error presenter: a *cascade.Error keeps its code
// and message; gqlgen's own errors (parse, validation) keep theirs; all
// else is INTERNAL with a generic message, logged once with its path.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var ce *cascade.Error
		if errors.As(err, &ce) {
			gqlErr.Message = ce.Message
			setCode(gqlErr, ce.Code)
			return gqlErr
		}
		var ge *gqlerror.Error
		if errors.As(err, &ge) && ge.Err == nil {
			if _, ok := gqlErr.Extensions["code"]; !ok {
				setCode(gqlErr, cascade.EINVALID)
			}
			return gqlErr
		}
		if errors.Is(err, context.Canceled) {
			setCode(gqlErr, cascade.EINTERNAL)
			gqlErr.Message = "request cancelled"
			return gqlErr
		}
		log.Error("graphql", "path", fmt.Sprint(gqlErr.Path), "err", err)
		gqlErr.Message = cascade.ErrorMessage(err)
		setCode(gqlErr, cascade.EINTERNAL)
		return gqlErr
	}
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}
