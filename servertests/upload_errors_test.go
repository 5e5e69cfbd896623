package servertests_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestEndpointUploadSaysWhatIsWrong: `cascade upload --endpoint` given
// the wrong address, keys or bucket of a real server says what to change
// first, naming the flag or variable, and keeps the SDK's words after it.
// They said "https response error StatusCode: 403" over plain HTTP, and
// "XML syntax error" for the web UI's address (QA); a web server that
// answers every request with a page took the whole upload, silently.
func TestEndpointUploadSaysWhatIsWrong(t *testing.T) {
	readOnly := cascade.S3Keys{AccessKey: "CASCADEREADONLYKEY01", SecretKey: "cascade-read-only-secret-0123456789abcd"}
	s := servertest.Server(t, s3test.WithS3, func(c *app.Config) { c.S3ReadOnlyKeys = readOnly })
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><html><body>an app</body></html>"))
	}))
	defer page.Close()
	keys := upload.Keys(s3test.Keys)
	for _, c := range []struct {
		name string
		opts upload.Options
		want string
	}{
		{"the web UI's address", upload.Options{Endpoint: s.URL, Keys: keys}, `does not answer as an S3 endpoint (HTTP 404 without an S3 request id): --endpoint takes the URL`},
		{"a web page", upload.Options{Endpoint: page.URL, Keys: keys}, `does not answer as an S3 endpoint: --endpoint takes the URL`},
		{"an unknown access key", upload.Options{Endpoint: s.S3.URL, Keys: upload.Keys{AccessKey: "NOPE", SecretKey: keys.SecretKey}}, `the endpoint knows no access key "NOPE": give the key pair`},
		{"the wrong secret", upload.Options{Endpoint: s.S3.URL, Keys: upload.Keys{AccessKey: keys.AccessKey, SecretKey: "nope"}}, `the secret key is not access key "CASCADETESTACCESSKEY"'s`},
		{"the read-only pair", upload.Options{Endpoint: s.S3.URL, Keys: upload.Keys(readOnly)}, `access key "CASCADEREADONLYKEY01" may not write to bucket "cascade": is it the server's read-only pair`},
		{"another bucket", upload.Options{Endpoint: s.S3.URL, Keys: keys, Bucket: "other"}, `the endpoint has no bucket "other": --bucket takes`},
		{"nothing listening", upload.Options{Endpoint: closed, Keys: keys}, "nothing answers at " + closed + ": is `cascade serve` running there"},
		// A plain HTTP server of the test's own: a TLS hello holds the
		// gateway's connection, and so its shutdown, for 10 s.
		{"https for http", upload.Options{Endpoint: "https" + strings.TrimPrefix(page.URL, "http"), Keys: keys}, `speaks plain HTTP: give its URL with http://`},
	} {
		c.opts.Source, c.opts.RunName = src, "says-why"
		_, err := upload.Upload(context.Background(), c.opts)
		if err == nil {
			t.Errorf("%s: uploaded", c.name)
			continue
		}
		first, rest, _ := strings.Cut(err.Error(), "\n")
		if !strings.HasPrefix(first, "upload: ") || !strings.Contains(first, c.want) {
			t.Errorf("%s: the error begins\n  %s\nwant it to say %s", c.name, first, c.want)
		}
		if !strings.Contains(rest, "operation error S3") && !strings.Contains(rest, "x-amz-request-id") {
			t.Errorf("%s: the SDK's words are gone: %v", c.name, err)
		}
	}
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, RunName: "says-why", Endpoint: s.S3.URL, Keys: keys}); err != nil {
		t.Fatalf("the right address, keys and bucket: %v", err)
	}
}
