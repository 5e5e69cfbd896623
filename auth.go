package cascade

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Role is what a request may do with the API. With no token configured
// everyone may do everything (the server then listens on loopback only,
// see package app). With CASCADE_TOKEN set, every request must present it,
// or CASCADE_READONLY_TOKEN, which may read and subscribe but not change
// anything.
type Role int

const (
	// RoleNone is a request without a valid token.
	RoleNone Role = iota
	// RoleReadOnly may run queries and subscriptions.
	RoleReadOnly
	// RoleReadWrite may run everything.
	RoleReadWrite
)

// String names the role as messages do.
func (r Role) String() string {
	switch r {
	case RoleReadOnly:
		return "read-only"
	case RoleReadWrite:
		return "read-write"
	}
	return "none"
}

// Tokens are the configured tokens; the zero value means none, and
// everyone is [RoleReadWrite]. A token is presented as "Authorization:
// Bearer <token>" over HTTP, or in a websocket's connection_init payload
// (package graph/transport reads both).
type Tokens struct {
	ReadWrite string // CASCADE_TOKEN
	ReadOnly  string // CASCADE_READONLY_TOKEN
}

// Enabled reports whether requests need a token.
func (t Tokens) Enabled() bool { return t.ReadWrite != "" || t.ReadOnly != "" }

// minTokenLen keeps a token from being guessable by brute force over the
// network: 16 characters of a random alphabet are far beyond that.
const minTokenLen = 16

// Check reports a configuration that cannot work: a read-only token
// without a read-write one (nobody could ever launch a run), the same
// token for both, or a token too short to be secret.
func (t Tokens) Check() error {
	switch {
	case !t.Enabled():
		return nil
	case t.ReadWrite == "":
		return errors.New("CASCADE_READONLY_TOKEN is set without CASCADE_TOKEN: set the read-write token too")
	case t.ReadWrite == t.ReadOnly:
		return errors.New("CASCADE_TOKEN and CASCADE_READONLY_TOKEN are the same: a read-only token must differ")
	case len(t.ReadWrite) < minTokenLen:
		return errors.New("CASCADE_TOKEN: want at least 16 characters (openssl rand -hex 32 makes a good one)")
	case t.ReadOnly != "" && len(t.ReadOnly) < minTokenLen:
		return errors.New("CASCADE_READONLY_TOKEN: want at least 16 characters (openssl rand -hex 32 makes a good one)")
	}
	return nil
}

// Role is the role of a presented token: [RoleReadWrite] for anyone when
// no token is configured, else the role of the configured token it
// equals, or [RoleNone]. The comparison takes the same time whatever the
// token is: both sides are hashed first, so not even the length leaks, and
// both tokens are always compared.
func (t Tokens) Role(token string) Role {
	if !t.Enabled() {
		return RoleReadWrite
	}
	h := sha256.Sum256([]byte(token))
	rw := t.ReadWrite != "" && equalHashed(h, t.ReadWrite)
	ro := t.ReadOnly != "" && equalHashed(h, t.ReadOnly)
	switch {
	case token == "":
		return RoleNone
	case rw:
		return RoleReadWrite
	case ro:
		return RoleReadOnly
	}
	return RoleNone
}

func equalHashed(h [32]byte, want string) bool {
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(h[:], w[:]) == 1
}

// AuthorizationRole is the role of a request's Authorization header value:
// [RoleReadWrite] for anyone when no token is configured, else
// [RoleNone] unless it is "Bearer <token>" with a valid token.
func (t Tokens) AuthorizationRole(authorization string) Role {
	if !t.Enabled() {
		return RoleReadWrite
	}
	token, ok := BearerToken(authorization)
	if !ok {
		return RoleNone
	}
	return t.Role(token)
}

// BearerToken is the token of an Authorization value "Bearer <token>"
// (the scheme in any case); ok is false for anything else.
func BearerToken(authorization string) (token string, ok bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(authorization), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

type roleKey struct{}

// ContextWithRole returns ctx carrying role.
func ContextWithRole(ctx context.Context, role Role) context.Context {
	return context.WithValue(ctx, roleKey{}, role)
}

// RoleFromContext is the role ctx carries; [RoleNone] when it carries
// none.
func RoleFromContext(ctx context.Context) Role {
	r, _ := ctx.Value(roleKey{}).(Role)
	return r
}

// Require serves h to requests with a valid token of at least role min
// (any role when no token is configured) and answers the others 401 (no
// or a wrong token) or 403 (a read-only token where min is read-write).
// It is for endpoints besides /graphql, which answers in GraphQL's own
// terms: /debug/pprof, the CSV downloads.
func (t Tokens) Require(min Role, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch role := t.AuthorizationRole(r.Header.Get("Authorization")); {
		case role == RoleNone:
			w.Header().Set("WWW-Authenticate", `Bearer realm="cascade"`)
			http.Error(w, "401 unauthorized: send Authorization: Bearer <CASCADE_TOKEN>", http.StatusUnauthorized)
		case role < min:
			http.Error(w, "403 forbidden: this needs the read-write token (CASCADE_TOKEN)", http.StatusForbidden)
		default:
			h.ServeHTTP(w, r.WithContext(ContextWithRole(r.Context(), role)))
		}
	})
}
