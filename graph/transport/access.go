package transport

import (
	"context"
	"errors"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cascade-sim/cascade"
)

// closeUnauthorized is the websocket close code of a connection_init
// without a valid token: graphql-transport-ws's 4401 Unauthorized, which
// its clients do not retry.
const closeUnauthorized = 4401

// Messages of refused requests. The websocket one is a close reason, at
// most 123 bytes.
const (
	msgNoToken    = `this server needs a token: send "Authorization: Bearer <token>"`
	msgBadToken   = "the token is not valid"
	msgWSNoToken  = `UNAUTHENTICATED: connection_init needs {"authorization": "Bearer <token>"}`
	msgWSBadToken = "UNAUTHENTICATED: the token is not valid"
	msgReadOnly   = "this token is read-only: %s needs the read-write token (CASCADE_TOKEN)"
)

// refuseUnauthenticated answers a GraphQL-over-HTTP request without a
// valid token: 401 and a GraphQL response with code UNAUTHENTICATED.
func refuseUnauthenticated(w http.ResponseWriter, r *http.Request) {
	media, ok := responseMedia(r.Header.Get("Accept"))
	if !ok {
		media = mediaJSON
	}
	msg := msgNoToken
	if r.Header.Get("Authorization") != "" {
		msg = msgBadToken
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.Header().Set("WWW-Authenticate", `Bearer realm="cascade"`)
	w.WriteHeader(http.StatusUnauthorized)
	e := &gqlerror.Error{Message: msg}
	setCode(e, cascade.EUNAUTHORIZED)
	writeResponse(w, &graphql.Response{Errors: gqlerror.List{e}}, false)
}

// initFunc authenticates a websocket at connection_init. A token in the
// payload, {"authorization": "Bearer <t>"} (or "Authorization") or
// {"token": "<t>"}, decides; without one, the upgrade request's
// Authorization header does (the role the handler put in ctx). A
// connection without a valid token is closed with 4401 and a reason.
func initFunc(tokens cascade.Tokens) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		role := cascade.RoleFromContext(ctx)
		reason := msgWSNoToken
		switch {
		case !tokens.Enabled():
			// Whatever a client sends, a server without tokens takes it.
		case payload.Authorization() != "":
			a := payload.Authorization()
			reason = msgWSBadToken
			role = cascade.RoleNone
			if t, ok := cascade.BearerToken(a); ok {
				role = tokens.Role(t)
			}
		case payload.GetString("token") != "":
			reason = msgWSBadToken
			role = tokens.Role(payload.GetString("token"))
		}
		if role == cascade.RoleNone {
			ctx = transport.WithWebsocketCloseCode(ctx, closeUnauthorized)
			ctx = transport.AppendCloseReason(ctx, reason)
			return ctx, nil, errors.New(reason)
		}
		ctx = cascade.ContextWithRole(ctx, role)
		ctx = context.WithValue(ctx, connStateKey{}, &connState{})
		return ctx, nil, nil
	}
}

// accessCheck refuses, before it runs, an operation its token may not
// run: any without a valid token (the transports refuse those earlier;
// this is the backstop), and a mutation with a read-only one.
type accessCheck struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = accessCheck{}

func (accessCheck) ExtensionName() string                   { return "AccessCheck" }
func (accessCheck) Validate(graphql.ExecutableSchema) error { return nil }

func (accessCheck) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	switch role := cascade.RoleFromContext(ctx); {
	case role == cascade.RoleNone:
		err := gqlerror.Errorf(msgNoToken)
		setCode(err, cascade.EUNAUTHORIZED)
		return err
	case role < cascade.RoleReadWrite && opCtx.Operation.Operation == ast.Mutation:
		what := "a mutation"
		if f, ok := firstField(opCtx.Operation.SelectionSet); ok {
			what = f
		}
		err := gqlerror.Errorf(msgReadOnly, what)
		setCode(err, cascade.EFORBIDDEN)
		return err
	}
	return nil
}

// firstField names the operation's first root field, for a message.
func firstField(set ast.SelectionSet) (string, bool) {
	for _, sel := range set {
		if f, ok := sel.(*ast.Field); ok {
			return f.Name, true
		}
	}
	return "", false
}

// statusOf is the HTTP status of a request refused before it ran, by its
// errors' code: 401 and 403 for access, 0 for the spec's usual answer.
func statusOf(errs gqlerror.List) int {
	for _, e := range errs {
		switch e.Extensions["code"] {
		case cascade.EUNAUTHORIZED:
			return http.StatusUnauthorized
		case cascade.EFORBIDDEN:
			return http.StatusForbidden
		}
	}
	return 0
}
