package frontend

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// The UI's scripts, styles and pages are sent gzip-compressed to clients that accept it (the
// first screen's script is a third of its size so, the playground's editor a quarter).
//
// Each file is compressed on its first request that accepts gzip and the result kept in
// memory, rather than written beside each asset by the Vite build: the embedded files never
// change while the server runs, so each is compressed once, at the best level, and the cache
// holds at most one compressed copy of each (about 2 MB for the whole UI, the playground's
// included, and only of the files asked for); the binary does not carry every asset twice;
// and whatever dist/ holds is served compressed, however it was built. The first request for
// a file pays for its compression (about 0.1 s for the playground's 2.8 MB editor on an idle core, 0.6 s on a busy one).

// compressible are the extensions of the files worth compressing: text, and fonts without
// compression of their own. Images and woff/woff2 fonts are compressed already.
var compressible = map[string]bool{
	".html": true, ".js": true, ".mjs": true, ".css": true, ".svg": true, ".json": true,
	".map": true, ".txt": true, ".wasm": true, ".ttf": true, ".otf": true, ".ico": true,
}

// gzipCache holds the gzip encoding of each compressible file, by name, once made.
type gzipCache struct {
	mu      sync.Mutex
	entries map[string]*gzipEntry
}

type gzipEntry struct {
	once sync.Once
	data []byte // nil when compressing does not make the file smaller
}

// get returns name's gzip encoding, compressing what read returns on the first call for name
// (later callers for the same name wait for it); nil when gzip would not be smaller or the
// file could not be read.
func (c *gzipCache) get(name string, read func() ([]byte, error)) []byte {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*gzipEntry{}
	}
	e := c.entries[name]
	if e == nil {
		e = &gzipEntry{}
		c.entries[name] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		plain, err := read()
		if err != nil {
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level: no error
		_, _ = zw.Write(plain)                                 // a bytes.Buffer takes all
		_ = zw.Close()
		if b.Len() < len(plain) {
			e.data = b.Bytes()
		}
	})
	return e.data
}

// acceptsGzip reports whether the request's Accept-Encoding lets the response be gzip:
// gzip (or x-gzip) listed with a q-value above 0, or else * with one.
func acceptsGzip(r *http.Request) bool {
	gz, star := -1.0, -1.0
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					} else {
						q = 0
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "gzip", "x-gzip":
				gz = max(gz, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

// serveGzip writes name's gzip encoding when the request accepts one and takes the whole
// file, and reports whether it did. Every answer for a compressible file says it varies by
// Accept-Encoding. A Range request gets the plain file's bytes (from ServeContent, as
// before): a range of the compressed stream would serve no client well.
func (h *spa) serveGzip(w http.ResponseWriter, r *http.Request, name, cacheControl string) bool {
	if !compressible[strings.ToLower(path.Ext(name))] {
		return false
	}
	w.Header().Add("Vary", "Accept-Encoding")
	if r.Header.Get("Range") != "" || !acceptsGzip(r) {
		return false
	}
	gz := h.gz.get(name, func() ([]byte, error) { return fs.ReadFile(h.fsys, name) })
	if gz == nil {
		return false
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		// As ServeContent would sniff it from the plain file's start.
		plain, err := gunzipHead(gz)
		if err != nil {
			return false
		}
		ctype = http.DetectContentType(plain)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Encoding", "gzip")
	hdr.Set("Content-Length", strconv.Itoa(len(gz)))
	hdr.Set("Cache-Control", cacheControl)
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(gz)
	}
	return true
}

// gunzipHead returns up to the first 512 bytes that gz decompresses to: what content sniffing
// reads.
func gunzipHead(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(zr, 512))
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return b, nil
}
