package frontend

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// A script and a style large and repetitive enough to shrink, a page, and a file too small
// to gain from compression.
var (
	bigJS  = []byte("export const a = 1;\n" + strings.Repeat("console.log('cascade, a GPU trace viewer');\n", 2000))
	bigCSS = []byte(strings.Repeat(".krow { display: grid; gap: 8px; }\n", 500))
	page   = []byte("<!doctype html><html><head><title>app</title></head><body>" + strings.Repeat("<div></div>", 200) + "</body></html>")
	zipped = fstest.MapFS{
		"index.html":                {Data: page},
		"playground.html":           {Data: page},
		"assets/main-abc123.js":     {Data: bigJS},
		"assets/main-abc123.css":    {Data: bigCSS},
		"assets/tiny-0001.js":       {Data: []byte("x")},
		"assets/logo-0002.png":      {Data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 4000)},
		"assets/source-0003.js.map": {Data: []byte(`{"version":3,"sources":[` + strings.Repeat(`"src/a.ts",`, 300) + `"b"]}`)},
	}
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func TestGzipWhenAccepted(t *testing.T) {
	h := newHandler(zipped)
	cases := []struct {
		target string
		plain  []byte
		ctype  string
		cache  string
	}{
		{"/assets/main-abc123.js", bigJS, "text/javascript; charset=utf-8", cacheImmutable},
		{"/assets/main-abc123.css", bigCSS, "text/css; charset=utf-8", cacheImmutable},
		{"/", page, "text/html; charset=utf-8", cacheRevalidate},
		{"/traces/x", page, "text/html; charset=utf-8", cacheRevalidate},
		{"/playground", page, "text/html; charset=utf-8", cacheRevalidate},
		{"/assets/source-0003.js.map", zipped["assets/source-0003.js.map"].Data, "", cacheImmutable},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			for _, ae := range []string{"gzip", "gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8", "*", "x-gzip"} {
				w := get(t, h, c.target, "Accept", "text/html", "Accept-Encoding", ae)
				if w.Code != 200 {
					t.Fatalf("Accept-Encoding %q: code %d", ae, w.Code)
				}
				hdr := w.Header()
				if got := hdr.Get("Content-Encoding"); got != "gzip" {
					t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want gzip", ae, got)
				}
				if got := hdr.Get("Vary"); got != "Accept-Encoding" {
					t.Errorf("Vary %q", got)
				}
				if got := hdr.Get("Cache-Control"); got != c.cache {
					t.Errorf("Cache-Control %q, want %q", got, c.cache)
				}
				if c.ctype != "" && hdr.Get("Content-Type") != c.ctype {
					t.Errorf("Content-Type %q, want %q", hdr.Get("Content-Type"), c.ctype)
				}
				if hdr.Get("Content-Type") == "" || strings.Contains(hdr.Get("Content-Type"), "gzip") {
					t.Errorf("Content-Type %q: the plain file's type, not the encoding's", hdr.Get("Content-Type"))
				}
				if got := hdr.Get("Content-Length"); got != itoa(w.Body.Len()) {
					t.Errorf("Content-Length %s for %d bytes", got, w.Body.Len())
				}
				if w.Body.Len() >= len(c.plain) {
					t.Errorf("gzip body %d bytes, plain %d: not smaller", w.Body.Len(), len(c.plain))
				}
				if got := gunzip(t, w.Body.Bytes()); !bytes.Equal(got, c.plain) {
					t.Errorf("decompresses to %d bytes, not the file's %d", len(got), len(c.plain))
				}
			}
		})
	}
}

func TestPlainWhenGzipNotAccepted(t *testing.T) {
	h := newHandler(zipped)
	for _, ae := range []string{"", "identity", "br", "gzip;q=0", "gzip;q=0, *", "*;q=0", "gzip;q=bad"} {
		w := get(t, h, "/assets/main-abc123.js", "Accept-Encoding", ae)
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), bigJS) {
			t.Fatalf("Accept-Encoding %q: code %d, %d bytes; want the plain file", ae, w.Code, w.Body.Len())
		}
		if got := w.Header().Get("Content-Encoding"); got != "" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, got)
		}
		if got := w.Header().Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q: a cache must not hand this answer to a gzip client", ae, got)
		}
		if got := w.Header().Get("Cache-Control"); got != cacheImmutable {
			t.Errorf("Cache-Control %q", got)
		}
	}
}

func TestGzipLeavesOthersPlain(t *testing.T) {
	h := newHandler(zipped)
	// Too small to gain, and an image: plain, whatever the client accepts.
	for _, c := range []struct {
		target string
		vary   string
	}{{"/assets/tiny-0001.js", "Accept-Encoding"}, {"/assets/logo-0002.png", ""}} {
		w := get(t, h, c.target, "Accept-Encoding", "gzip")
		if w.Code != 200 || w.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: code %d, Content-Encoding %q; want it plain", c.target, w.Code, w.Header().Get("Content-Encoding"))
		}
		if got := w.Header().Get("Vary"); got != c.vary {
			t.Errorf("%s: Vary %q, want %q", c.target, got, c.vary)
		}
	}
	if w := get(t, h, "/assets/gone-0000.js", "Accept-Encoding", "gzip"); w.Code != 404 {
		t.Errorf("a missing asset: code %d", w.Code)
	}
}

func TestGzipRangeAndHead(t *testing.T) {
	h := newHandler(zipped)
	// A range is of the plain file, as before.
	w := get(t, h, "/assets/main-abc123.js", "Accept-Encoding", "gzip", "Range", "bytes=7-12")
	if w.Code != http.StatusPartialContent {
		t.Fatalf("Range: code %d, want 206", w.Code)
	}
	if got := w.Body.String(); got != string(bigJS[7:13]) || w.Header().Get("Content-Encoding") != "" {
		t.Errorf("Range bytes=7-12: %q (Content-Encoding %q), want %q plain", got, w.Header().Get("Content-Encoding"), bigJS[7:13])
	}
	if got := w.Header().Get("Content-Range"); got != "bytes 7-12/"+itoa(len(bigJS)) {
		t.Errorf("Content-Range %q", got)
	}

	r, _ := http.NewRequest(http.MethodHead, "/assets/main-abc123.js", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	hw := newRecorder()
	h.ServeHTTP(hw, r)
	full := get(t, h, "/assets/main-abc123.js", "Accept-Encoding", "gzip")
	if hw.Code != 200 || hw.Body.Len() != 0 || hw.Header().Get("Content-Encoding") != "gzip" ||
		hw.Header().Get("Content-Length") != itoa(full.Body.Len()) {
		t.Errorf("HEAD: code %d, %d body bytes, Content-Encoding %q, Content-Length %q; want 200, none, gzip, %d",
			hw.Code, hw.Body.Len(), hw.Header().Get("Content-Encoding"), hw.Header().Get("Content-Length"), full.Body.Len())
	}
}

func TestGzipCompressesOnce(t *testing.T) {
	reads := 0
	var mu sync.Mutex
	var c gzipCache
	read := func() ([]byte, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		return bigJS, nil
	}
	var wg sync.WaitGroup
	outs := make([][]byte, 8)
	for i := range outs {
		wg.Go(func() { outs[i] = c.get("assets/main.js", read) })
	}
	wg.Wait()
	if reads != 1 {
		t.Errorf("compressed %d times, want once", reads)
	}
	for _, o := range outs {
		if !bytes.Equal(o, outs[0]) || o == nil {
			t.Fatal("callers got different or no encodings")
		}
	}
}

func TestGzipServesTheEmbeddedUI(t *testing.T) {
	if !Built() {
		t.Skip("dist/ holds no built UI")
	}
	h := Handler()
	plain := get(t, h, "/")
	zw := get(t, h, "/", "Accept-Encoding", "gzip")
	if zw.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, zw.Body.Bytes()), plain.Body.Bytes()) {
		t.Fatalf("GET / with gzip: Content-Encoding %q, or it does not decompress to index.html", zw.Header().Get("Content-Encoding"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
