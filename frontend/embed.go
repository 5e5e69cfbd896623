// Package frontend serves Cascade's web UI and GraphQL playground, built by Vite into dist/
// and embedded in the binary. A binary built without the UI (plain `go build` in a fresh
// clone, where dist/ holds only .gitkeep) serves a page that says how to build it.
package frontend

import (
	"bytes"
	"embed"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist
var dist embed.FS

func distFS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded, so it is always there
	}
	return sub
}

// Built reports whether the binary holds a built UI (dist/index.html).
func Built() bool { return hasIndex(distFS()) }

// Handler serves the UI: the single-page app at / (index.html for every client route),
// hashed assets under /assets/ with long cache lifetimes, and the GraphQL playground at
// /playground. The GraphQL endpoint itself, /graphql, is not served here.
func Handler() http.Handler { return newHandler(distFS()) }

func hasIndex(fsys fs.FS) bool {
	st, err := fs.Stat(fsys, "index.html")
	return err == nil && !st.IsDir()
}

const (
	cacheImmutable  = "public, max-age=31536000, immutable"
	cacheRevalidate = "no-cache"
)

func newHandler(fsys fs.FS) http.Handler {
	if !hasIndex(fsys) {
		return http.HandlerFunc(serveUnbuilt)
	}
	return &spa{fsys: fsys}
}

type spa struct {
	fsys fs.FS
	gz   gzipCache
}

func (h *spa) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean("/" + r.URL.Path)
	switch {
	case p == "/playground" || p == "/playground.html":
		h.serveFile(w, r, "playground.html", cacheRevalidate)
	case strings.HasPrefix(p, "/assets/"):
		// Vite names every asset by its content hash: a name never changes meaning.
		if !h.serveFile(w, r, strings.TrimPrefix(p, "/"), cacheImmutable) {
			http.NotFound(w, r)
		}
	case p == "/" || p == "/index.html":
		h.serveFile(w, r, "index.html", cacheRevalidate)
	default:
		name := strings.TrimPrefix(p, "/")
		if !strings.HasPrefix(path.Base(name), ".") && h.serveFile(w, r, name, cacheRevalidate) {
			return
		}
		if path.Ext(name) != "" && !strings.Contains(r.Header.Get("Accept"), "text/html") {
			// A missing file (favicon.ico, a stale chunk) is a 404, not the app.
			http.NotFound(w, r)
			return
		}
		h.serveFile(w, r, "index.html", cacheRevalidate) // a client route: the app routes it
	}
}

// serveFile writes the named regular file, or reports false when there is none.
func (h *spa) serveFile(w http.ResponseWriter, r *http.Request, name, cacheControl string) bool {
	f, err := h.fsys.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return false
	}
	if h.serveGzip(w, r, name, cacheControl) {
		return true
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		b, err := io.ReadAll(f)
		if err != nil {
			http.Error(w, "cannot read "+name, http.StatusInternalServerError)
			return true
		}
		rs = bytes.NewReader(b)
	}
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Embedded files have no modification time; ServeContent then relies on Cache-Control.
	http.ServeContent(w, r, name, st.ModTime(), rs)
	return true
}

const unbuiltPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Cascade: UI not built</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}code,pre{background:#eee;padding:2px 4px;border-radius:4px}</style>
</head>
<body>
<h1>Cascade's web UI is not built into this binary</h1>
<p>This server was built without its web UI and playground. The GraphQL API works at
<a href="/graphql"><code>/graphql</code></a>.</p>
<p>To build the UI (Node.js 20 and npm), run from the repository root:</p>
<pre>make ui</pre>
<p>which runs <code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>. Then build the server again
(<code>go build ./...</code>): the UI is embedded from <code>frontend/dist</code>.</p>
</body>
</html>
`

func serveUnbuilt(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean("/" + r.URL.Path)
	if strings.HasPrefix(p, "/assets/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", cacheRevalidate)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = io.WriteString(w, unbuiltPage)
	}
}
