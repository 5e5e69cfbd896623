package s3gw

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/versity/versitygw/s3err"
)

// FuzzCheckKey: an object key CheckKey accepts is a file (or, with a
// trailing slash, a directory) inside the bucket under exactly its own
// name, with no "." or ".." component, none of the gateway's own names
// and no control character; a key it refuses gets an S3 client error.
func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{
		"traces/run1/traces/kernel-1.trace", "traces/run1/", "../escaped", "traces/../../escaped", "/escaped", "traces//escaped",
		"traces/.hidden/kernel-1.trace", ".sgwtmp/multipart/x", "traces/x/a\x01b", "traces/x/" + strings.Repeat("k", 256),
		"a/./b", "a\\..\\b", "é/ü", "a/\x7f", "", "/", "a b/c%2F..", "traces/run1/.DS_Store", "a/.b.sgwtmp.1", ".vgwlocks",
	} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := CheckKey(key)
		if err != nil {
			var api s3err.APIError
			if !errors.As(err, &api) || api.HTTPStatusCode < 400 || api.HTTPStatusCode >= 500 {
				t.Fatalf("%q: %v is not an S3 client error", key, err)
			}
			return
		}
		name := strings.TrimSuffix(key, "/")
		if !filepath.IsLocal(name) || filepath.Clean(name) != name {
			t.Fatalf("accepted %q, which is not a clean local path", key)
		}
		for _, p := range strings.Split(name, "/") {
			if p == "." || p == ".." || p == ".sgwtmp" || p == ".vgwlocks" || strings.HasPrefix(p, ".") && strings.Contains(p, ".sgwtmp.") ||
				len(p) > maxNameLen || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("accepted %q with component %q", key, p)
			}
		}
		// It is a file of that name inside the bucket.
		root := t.TempDir()
		p := filepath.Join(root, filepath.FromSlash(name))
		if rel, err := filepath.Rel(root, p); err != nil || filepath.ToSlash(rel) != name {
			t.Fatalf("accepted %q, stored as %q", key, rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatalf("accepted %q: %v", key, err)
		}
		if strings.HasSuffix(key, "/") {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			t.Fatalf("accepted %q: %v", key, err)
		}
	})
}
