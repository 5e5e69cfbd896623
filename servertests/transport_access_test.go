package servertests_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

const (
	rwToken = "rw-token-0123456789abcdef"
	roToken = "ro-token-0123456789abcdef"
)

func withTokens(c *app.Config) {
	c.Tokens = cascade.Tokens{ReadWrite: rwToken, ReadOnly: roToken}
}

// TestTokensOverHTTP: with tokens on, a request without one or with a
// wrong one is refused 401 UNAUTHENTICATED before anything runs; the
// read-only token queries but its mutations are refused 403 FORBIDDEN;
// the read-write token does everything.
func TestTokensOverHTTP(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, withTokens)
	const query = `{ traces { totalCount } }`
	// A mutation that runs says NOT_FOUND: there is no such trace.
	const mutation = `mutation { retryTrace(id: "missing") { id } }`
	cases := []struct {
		name, token, query string
		status             int
		code               string
	}{
		{"query without token", "", query, 401, "UNAUTHENTICATED"},
		{"mutation without token", "", mutation, 401, "UNAUTHENTICATED"},
		{"query with a wrong token", "not-the-token-0123456789", query, 401, "UNAUTHENTICATED"},
		{"query with a prefix of the token", rwToken[:len(rwToken)-1], query, 401, "UNAUTHENTICATED"},
		{"query read-only", roToken, query, 200, ""},
		{"mutation read-only", roToken, mutation, 403, "FORBIDDEN"},
		{"query read-write", rwToken, query, 200, ""},
		{"mutation read-write", rwToken, mutation, 200, "NOT_FOUND"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Post(t, c.token, c.query, nil)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d (%+v)", r.Status, c.status, r.Errors)
			}
			switch {
			case c.code == "" && len(r.Errors) > 0:
				t.Fatalf("errors %+v", r.Errors)
			case c.code != "" && (len(r.Errors) != 1 || r.Errors[0].Code() != c.code):
				t.Fatalf("errors %+v, want one with code %s", r.Errors, c.code)
			}
			if c.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			if c.code == "FORBIDDEN" && !strings.Contains(r.Errors[0].Message, "read-only") {
				t.Errorf("message %q does not say the token is read-only", r.Errors[0].Message)
			}
			if c.status >= 400 && len(r.Data) > 0 {
				t.Errorf("data %s on a refused request", r.Data)
			}
		})
	}

	t.Run("GET and other schemes", func(t *testing.T) {
		for auth, want := range map[string]int{
			"Bearer " + roToken:       200,
			"bearer " + roToken:       200,
			"Basic " + roToken:        401,
			roToken:                   401,
			"Bearer " + roToken + "x": 401,
		} {
			req, _ := http.NewRequest("GET", s.URL+"/graphql?"+url.Values{"query": {query}}.Encode(), nil)
			req.Header.Set("Authorization", auth)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("Authorization %q: status %d, want %d", auth, resp.StatusCode, want)
			}
		}
	})

	t.Run("the UI loads without a token", func(t *testing.T) {
		// Everything but /graphql is the UI's static files (gqlgen's
		// playground page in this test server).
		resp, err := http.Get(s.URL + "/playground")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/playground: status %d", resp.StatusCode)
		}
	})
}

// TestTokensOverWebsockets: the token comes in connection_init, in any of
// the three spellings; without a valid one the connection is closed with
// 4401 and a reason, on both subprotocols. A read-only connection
// subscribes and follows changes but its mutations are refused.
func TestTokensOverWebsockets(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, withTokens)
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		t.Run(protocol, func(t *testing.T) {
			refused := map[string]map[string]any{
				"no payload token":  {},
				"a wrong token":     {"authorization": "Bearer wrong-token-0123456789"},
				"a wrong scheme":    {"authorization": "Token " + rwToken},
				"a wrong raw token": {"token": "wrong-token-0123456789"},
			}
			for name, payload := range refused {
				_, err := s.DialWS(t, protocol, payload)
				var ce *websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != 4401 || !strings.HasPrefix(ce.Text, "UNAUTHENTICATED") {
					t.Errorf("%s: want a 4401 close saying UNAUTHENTICATED, got %v", name, err)
				}
			}
			accepted := map[string]map[string]any{
				"authorization": {"authorization": "Bearer " + roToken},
				"Authorization": {"Authorization": "Bearer " + roToken},
				"token":         {"token": roToken},
			}
			for name, payload := range accepted {
				conn, err := s.DialWS(t, protocol, payload)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				conn.Close()
			}

			conn, err := s.DialWS(t, protocol, map[string]any{"token": roToken})
			if err != nil {
				t.Fatal(err)
			}
			id := "ro-" + protocol
			before := s.Subscribers()
			sub := servertest.SubscribeOn(t, conn, protocol, `subscription($id: ID) { traceUpdated(id: $id) { id } }`, map[string]any{"id": id})
			testkit.Eventually(t, 5*time.Second, "subscribed", func() bool { return s.Subscribers() > before })
			s.WriteFile(t, id, "traces/kernel-1.trace", []byte("x"))
			var r struct{ TraceUpdated struct{ ID string } }
			if err := sub.Next(5*time.Second, &r); err != nil || r.TraceUpdated.ID != id {
				t.Fatalf("read-only subscription: %+v %v", r, err)
			}
		})
	}

	t.Run("mutation over a read-only websocket", func(t *testing.T) {
		conn, err := s.DialWS(t, "graphql-transport-ws", map[string]any{"authorization": "Bearer " + roToken})
		if err != nil {
			t.Fatal(err)
		}
		sub := servertest.SubscribeOn(t, conn, "graphql-transport-ws", `mutation { retryTrace(id: "sample") { id } }`, nil)
		err = sub.Next(5*time.Second, &struct{}{})
		if err == nil || !strings.Contains(err.Error(), "FORBIDDEN") {
			t.Fatalf("want FORBIDDEN, got %v", err)
		}
	})

	t.Run("token in the upgrade request's header", func(t *testing.T) {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		wsURL := strings.Replace(s.URL, "http", "ws", 1) + "/graphql"
		c, _, err := d.Dial(wsURL, http.Header{"Authorization": {"Bearer " + rwToken}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.WriteJSON(map[string]any{"type": "connection_init"})
		var m struct{ Type string }
		if err := c.ReadJSON(&m); err != nil || m.Type != "connection_ack" {
			t.Fatalf("%+v %v", m, err)
		}
		// A wrong header is refused before the upgrade.
		_, resp, err := d.Dial(wsURL, http.Header{"Authorization": {"Bearer wrong-token-0123456789"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong header: %v %v", err, resp)
		}
	})
}

// TestConfiguredOrigins: besides the server's own origin, pages of the
// configured ones may open websockets and send requests; others may not.
func TestConfiguredOrigins(t *testing.T) {
	t.Parallel()
	const dev = "http://localhost:5173"
	s := servertest.Server(t, func(c *app.Config) { c.AllowedOrigins = []string{dev} })
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	wsURL := strings.Replace(s.URL, "http", "ws", 1) + "/graphql"
	for origin, ok := range map[string]bool{
		dev:                      true,
		s.URL:                    true,
		"http://localhost:5174":  false,
		"https://localhost:5173": false,
		"null":                   false,
	} {
		c, resp, err := d.Dial(wsURL, http.Header{"Origin": {origin}})
		if ok && err != nil {
			t.Errorf("origin %s refused: %v", origin, err)
		}
		if !ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("origin %s: want 403, got %v", origin, err)
		}
		if c != nil {
			c.Close()
		}
	}
}

// TestWithoutTokensAnyCredentialPasses: a server without tokens ignores
// what a client sends as one, over HTTP and in connection_init.
func TestWithoutTokensAnyCredentialPasses(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	if r := s.Post(t, "whatever", `{ __typename }`, nil); r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("HTTP: %d %+v", r.Status, r.Errors)
	}
	for _, payload := range []map[string]any{{"authorization": "Basic xyz"}, {"token": "anything"}, {"Authorization": "Bearer x"}} {
		if _, err := s.DialWS(t, "graphql-transport-ws", payload); err != nil {
			t.Errorf("%v: %v", payload, err)
		}
	}
}
