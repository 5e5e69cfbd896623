package frontend

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func get(t *testing.T, h http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var built = fstest.MapFS{
	".gitkeep":                   {Data: []byte{}},
	"index.html":                 {Data: []byte("<!doctype html><title>app</title>")},
	"playground.html":            {Data: []byte("<!doctype html><title>playground</title>")},
	"assets/main-abc123.js":      {Data: []byte("console.log(1)")},
	"assets/playground-de45.css": {Data: []byte("body{}")},
}

func TestHandlerBuilt(t *testing.T) {
	h := newHandler(built)
	cases := []struct {
		target, accept string
		code           int
		body, cache    string
		ctype          string
	}{
		{"/", "text/html", 200, "<title>app</title>", "no-cache", "text/html"},
		{"/index.html", "", 200, "<title>app</title>", "no-cache", "text/html"},
		{"/traces/run-42", "text/html", 200, "<title>app</title>", "no-cache", "text/html"},
		{"/runs/7", "", 200, "<title>app</title>", "no-cache", "text/html"},
		{"/traces/llama.v2", "text/html,application/xhtml+xml", 200, "<title>app</title>", "no-cache", "text/html"},
		{"/playground", "", 200, "<title>playground</title>", "no-cache", "text/html"},
		{"/playground/", "", 200, "<title>playground</title>", "no-cache", "text/html"},
		{"/assets/main-abc123.js", "", 200, "console.log(1)", "public, max-age=31536000, immutable", "javascript"},
		{"/assets/playground-de45.css", "", 200, "body{}", "public, max-age=31536000, immutable", "text/css"},
		{"/assets/gone-0000.js", "", 404, "", "", ""},
		{"/favicon.ico", "image/*", 404, "", "", ""},
		{"/.gitkeep", "", 404, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			w := get(t, h, c.target, "Accept", c.accept)
			if w.Code != c.code {
				t.Fatalf("GET %s: code %d, want %d", c.target, w.Code, c.code)
			}
			if c.code != 200 {
				return
			}
			if !strings.Contains(w.Body.String(), c.body) {
				t.Errorf("GET %s: body %q, want it to contain %q", c.target, w.Body.String(), c.body)
			}
			if got := w.Header().Get("Cache-Control"); got != c.cache {
				t.Errorf("GET %s: Cache-Control %q, want %q", c.target, got, c.cache)
			}
			if got := w.Header().Get("Content-Type"); !strings.Contains(got, c.ctype) {
				t.Errorf("GET %s: Content-Type %q, want %q", c.target, got, c.ctype)
			}
		})
	}
}

func TestHandlerMethods(t *testing.T) {
	for _, h := range []http.Handler{newHandler(built), newHandler(fstest.MapFS{})} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST /: code %d, want 405", w.Code)
		}
		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
		if w.Code != http.StatusOK || w.Body.Len() != 0 {
			t.Errorf("HEAD /: code %d, %d body bytes; want 200 and none", w.Code, w.Body.Len())
		}
	}
}

func TestHandlerUnbuilt(t *testing.T) {
	h := newHandler(fstest.MapFS{".gitkeep": {Data: []byte{}}})
	for _, target := range []string{"/", "/playground", "/traces/x"} {
		w := get(t, h, target)
		if w.Code != 200 {
			t.Fatalf("GET %s: code %d", target, w.Code)
		}
		body := w.Body.String()
		for _, want := range []string{"make ui", "cd frontend &amp;&amp; npm ci &amp;&amp; npm run build", "/graphql"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: page lacks %q", target, want)
			}
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
	}
	if w := get(t, h, "/assets/main.js"); w.Code != 404 {
		t.Errorf("GET /assets/main.js unbuilt: code %d, want 404", w.Code)
	}
}

func TestBuiltMatchesEmbeddedDist(t *testing.T) {
	// Whatever dist holds when the tests run, Built and Handler agree about it.
	w := get(t, Handler(), "/")
	if w.Code != 200 {
		t.Fatalf("GET /: code %d", w.Code)
	}
	unbuilt := strings.Contains(w.Body.String(), "make ui")
	if Built() == unbuilt {
		t.Errorf("Built() = %v but / serves the unbuilt page = %v", Built(), unbuilt)
	}
}
