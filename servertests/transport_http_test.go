package servertests_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestGraphQLOverHTTP: status codes, media types and the data entry follow
// the GraphQL-over-HTTP spec, for both response media types.
func TestGraphQLOverHTTP(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	const (
		js   = "application/json"
		gqlr = "application/graphql-response+json"
	)
	// A POSTed subscription used to wait for its first event: time out.
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(query string) string { return "?" + url.Values{"query": {query}}.Encode() }
	cases := []struct {
		name        string
		method      string
		query       string // URL query, for GET
		contentType string
		accept      string
		body        string
		status      int
		media       string // the response's media type
		data        string // "" when the response must have no data entry
		errContains string
		allow       string
		escaped     string // what the raw body holds, HTML-escaped, in place of data
	}{
		{name: "query", method: "POST", contentType: js, accept: js, body: `{"query":"{ __typename }"}`,
			status: 200, media: js, data: `{"__typename":"Query"}`},
		{name: "query graphql-response", method: "POST", contentType: js, accept: gqlr, body: `{"query":"{ __typename }"}`,
			status: 200, media: gqlr, data: `{"__typename":"Query"}`},
		{name: "no Accept is application/json", method: "POST", contentType: js, body: `{"query":"{ __typename }"}`,
			status: 200, media: js, data: `{"__typename":"Query"}`},
		{name: "preferred by quality", method: "POST", contentType: js, accept: gqlr + ";q=0.5, " + js, body: `{"query":"{ __typename }"}`,
			status: 200, media: js, data: `{"__typename":"Query"}`},
		{name: "neither media type", method: "POST", contentType: js, accept: "text/html", body: `{"query":"{ __typename }"}`,
			status: 406, media: js, errContains: "Accept"},

		{name: "parse failure json", method: "POST", contentType: js, accept: js, body: `{"query":"{"}`,
			status: 200, media: js, errContains: "Expected Name"},
		{name: "parse failure graphql-response", method: "POST", contentType: js, accept: gqlr, body: `{"query":"{"}`,
			status: 400, media: gqlr, errContains: "Expected Name"},
		{name: "validation failure json", method: "POST", contentType: js, accept: js, body: `{"query":"{ nosuchfield }"}`,
			status: 200, media: js, errContains: "nosuchfield"},
		{name: "validation failure graphql-response", method: "POST", contentType: js, accept: gqlr, body: `{"query":"{ nosuchfield }"}`,
			status: 400, media: gqlr, errContains: "nosuchfield"},
		{name: "variable coercion json", method: "POST", contentType: js, accept: js,
			body:   `{"query":"query($id: ID!) { trace(id: $id) { id } }","variables":{"id":null}}`,
			status: 200, media: js, errContains: "cannot be null"},
		{name: "variable coercion graphql-response", method: "POST", contentType: js, accept: gqlr,
			body:   `{"query":"query($id: ID!) { trace(id: $id) { id } }","variables":{"id":null}}`,
			status: 400, media: gqlr, errContains: "cannot be null"},
		{name: "execution error keeps data", method: "POST", contentType: js, accept: gqlr,
			body:   `{"query":"mutation { retryTrace(id: \"missing\") { id } }"}`,
			status: 200, media: gqlr, data: `null`, errContains: "not found"},

		{name: "body not JSON", method: "POST", contentType: js, accept: gqlr, body: `{ "not a JSON`,
			status: 400, media: gqlr, errContains: "request body"},
		{name: "body missing", method: "POST", contentType: js, accept: js,
			status: 400, media: js, errContains: "empty"},
		{name: "query missing", method: "POST", contentType: js, accept: js, body: `{"qeury":"{ __typename }"}`,
			status: 400, media: js, errContains: "query: missing"},
		{name: "query not a string", method: "POST", contentType: js, accept: js, body: `{"query":["{ __typename }"]}`,
			status: 400, media: js, errContains: "query: want a string"},
		{name: "variables not an object", method: "POST", contentType: js, accept: js, body: `{"query":"{ __typename }","variables":"{}"}`,
			status: 400, media: js, errContains: "variables: want a JSON object"},
		{name: "no Content-Type", method: "POST", accept: js, body: `{"query":"{ __typename }"}`,
			status: 415, media: js, errContains: "Content-Type"},
		{name: "subscription over POST", method: "POST", contentType: js, accept: js, body: `{"query":"subscription { traceUpdated { id } }"}`,
			status: 400, media: js, errContains: "websockets"},

		// Data goes out HTML-escaped, as encoding/json writes it: no raw <, > or & (kernel names have them).
		{name: "data HTML-escaped", method: "POST", contentType: js, accept: js,
			body:   `{"query":"{ __type(name: \"Kernel\") { fields { description } } }"}`,
			status: 200, media: js, escaped: `rms_norm_kernel\u003cc10::BFloat16\u003e`},

		{name: "GET query", method: "GET", query: get("{ __typename }"), accept: gqlr,
			status: 200, media: gqlr, data: `{"__typename":"Query"}`},
		{name: "GET variables", method: "GET", accept: js,
			query:  "?" + url.Values{"query": {"query($id: ID!) { trace(id: $id) { id } }"}, "variables": {`{"id":"sample"}`}}.Encode(),
			status: 200, media: js, data: `{"trace":{"id":"sample"}}`},
		{name: "GET mutation refused", method: "GET", query: get(`mutation { retryTrace(id: "sample") { id } }`), accept: gqlr,
			status: 405, media: gqlr, errContains: "GET serves queries only", allow: "POST"},
		{name: "GET bad variables", method: "GET", query: "?query=%7B__typename%7D&variables=%5B%5D", accept: js,
			status: 400, media: js, errContains: "variables"},
		{name: "PUT", method: "PUT", contentType: js, accept: js, body: `{"query":"{ __typename }"}`,
			status: 405, media: js, errContains: "method PUT", allow: "GET, POST, OPTIONS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, s.URL+"/graphql"+c.query, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != c.media+"; charset=utf-8" {
				t.Errorf("Content-Type %q, want %s", ct, c.media)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
			if c.escaped != "" && (!strings.Contains(string(body), c.escaped) || strings.ContainsAny(string(body), "<>&")) {
				t.Errorf("body %s\nis not HTML-escaped: want %s and no <, > or &", body, c.escaped)
			}
			var r map[string]json.RawMessage
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			data, hasData := r["data"]
			switch {
			case c.data == "" && c.escaped == "" && hasData:
				t.Errorf("a data entry %s on a request error", data)
			case c.data != "" && string(data) != c.data:
				t.Errorf("data %s, want %s", data, c.data)
			}
			if c.errContains == "" && r["errors"] != nil {
				t.Errorf("errors %s", r["errors"])
			}
			if c.errContains != "" && !strings.Contains(string(r["errors"]), c.errContains) {
				t.Errorf("errors %s, want one saying %q", r["errors"], c.errContains)
			}
		})
	}
}
