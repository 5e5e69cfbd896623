// Package auth checks the API's tokens. With none configured everyone may
// do everything (the server then listens on loopback only, see
// app). With CASCADE_TOKEN set, every request must present it, or
// CASCADE_READONLY_TOKEN, which may read and subscribe but not change
// anything. A token is presented as "Authorization: Bearer <token>" over
// HTTP, or in a websocket's connection_init payload (graph does that part).
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Role is what a request may do.
type Role int

const (
	// None: no valid token.
	None Role = iota
	// ReadOnly: queries and subscriptions.
	ReadOnly
	// ReadWrite: everything.
	ReadWrite
)

func (r Role) String() string {
	switch r {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	}
	return "none"
}

// Tokens are the configured tokens; the zero value means none, and
// everyone is [ReadWrite].
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

// Role is the role of a presented token: [ReadWrite] for anyone when no
// token is configured, else the role of the configured token it equals,
// or [None]. The comparison takes the same time whatever the token is:
// both sides are hashed first, so not even the length leaks, and both
// tokens are always compared.
func (t Tokens) Role(token string) Role {
	if !t.Enabled() {
		return ReadWrite
	}
	h := sha256.Sum256([]byte(token))
	rw := t.ReadWrite != "" && equal(h, t.ReadWrite)
	ro := t.ReadOnly != "" && equal(h, t.ReadOnly)
	switch {
	case token == "":
		return None
	case rw:
		return ReadWrite
	case ro:
		return ReadOnly
	}
	return None
}

func equal(h [32]byte, want string) bool {
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(h[:], w[:]) == 1
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

// RequestRole is the role of a request's Authorization header: None when
// tokens are configured and it has no valid one.
func (t Tokens) RequestRole(r *http.Request) Role {
	if !t.Enabled() {
		return ReadWrite
	}
	token, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok {
		return None
	}
	return t.Role(token)
}

type roleKey struct{}

// NewContext returns ctx carrying role.
func NewContext(ctx context.Context, role Role) context.Context {
	return context.WithValue(ctx, roleKey{}, role)
}

// FromContext is the role ctx carries; [None] when it carries none.
func FromContext(ctx context.Context) Role {
	r, _ := ctx.Value(roleKey{}).(Role)
	return r
}

// Require serves h to requests with a valid token of at least role min
// (any role when no token is configured) and answers the others 401 (no
// or a wrong token) or 403 (a read-only token where min is ReadWrite).
// It is for endpoints besides /graphql, which answers in GraphQL's own
// terms: /debug/pprof, say.
func (t Tokens) Require(min Role, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch role := t.RequestRole(r); {
		case role == None:
			w.Header().Set("WWW-Authenticate", `Bearer realm="cascade"`)
			http.Error(w, "401 unauthorized: send Authorization: Bearer <CASCADE_TOKEN>", http.StatusUnauthorized)
		case role < min:
			http.Error(w, "403 forbidden: this needs the read-write token (CASCADE_TOKEN)", http.StatusForbidden)
		default:
			h.ServeHTTP(w, r.WithContext(NewContext(r.Context(), role)))
		}
	})
}
