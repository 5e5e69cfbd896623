package cascade_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cascade-sim/cascade"
)

func TestRole(t *testing.T) {
	tokens := cascade.Tokens{ReadWrite: "read-write-0123456789", ReadOnly: "read-only-0123456789"}
	for token, want := range map[string]cascade.Role{
		"read-write-0123456789":  cascade.RoleReadWrite,
		"read-only-0123456789":   cascade.RoleReadOnly,
		"":                       cascade.RoleNone,
		"read-write-012345678":   cascade.RoleNone,
		"read-write-01234567890": cascade.RoleNone,
		"READ-WRITE-0123456789":  cascade.RoleNone,
	} {
		if got := tokens.Role(token); got != want {
			t.Errorf("Role(%q) = %v, want %v", token, got, want)
		}
	}
	if got := (cascade.Tokens{}).Role(""); got != cascade.RoleReadWrite {
		t.Errorf("without tokens: %v, want read-write", got)
	}
	if got := (cascade.Tokens{ReadWrite: "read-write-0123456789"}).Role(""); got != cascade.RoleNone {
		t.Errorf("an empty token with no read-only one configured: %v", got)
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":   "abc",
		"bearer abc":   "abc",
		"BEARER  abc ": "abc",
		"Basic abc":    "",
		"abc":          "",
		"Bearer ":      "",
	} {
		if got, ok := cascade.BearerToken(header); got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v", header, got, ok)
		}
	}
}

// TestRequire: an endpoint outside GraphQL (pprof, a CSV) behind the tokens.
func TestRequire(t *testing.T) {
	tokens := cascade.Tokens{ReadWrite: "read-write-0123456789", ReadOnly: "read-only-0123456789"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cascade.RoleFromContext(r.Context()).String()))
	})
	srv := httptest.NewServer(tokens.Require(cascade.RoleReadWrite, h))
	defer srv.Close()
	for header, want := range map[string]int{
		"":                             401,
		"Bearer wrong-0123456789":      401,
		"Bearer read-only-0123456789":  403,
		"Bearer read-write-0123456789": 200,
	} {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%q: status %d, want %d", header, resp.StatusCode, want)
		}
		if want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%q: no WWW-Authenticate", header)
		}
	}
}
