package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestRequire: an endpoint outside GraphQL (pprof) behind the tokens.
func TestRequire(t *testing.T) {
	tokens := cascade.Tokens{ReadWrite: "read-write-0123456789", ReadOnly: "read-only-0123456789"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cascade.RoleFromContext(r.Context()).String()))
	})
	srv := httptest.NewServer(requireRole(tokens, cascade.RoleReadWrite, h))
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
