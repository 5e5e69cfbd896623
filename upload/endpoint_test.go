package upload

import (
	"strings"
	"testing"
)

// TestCheckEndpoint: an endpoint without a scheme, with a path, or of
// another scheme is refused saying what to give; a host and port alone,
// with or without a trailing slash, is taken (QA: "127.0.0.1:7070" said
// only "not a valid URI", and ".../cascade" a bare NoSuchKey).
func TestCheckEndpoint(t *testing.T) {
	for e, want := range map[string]string{
		"127.0.0.1:7070":                 `has no scheme: give http://127.0.0.1:7070`,
		"localhost:7070":                 `has no scheme: give http://localhost:7070`,
		"http://127.0.0.1:7070/cascade":  `has a path: give the endpoint alone, http://127.0.0.1:7070; the bucket is --bucket`,
		"http://localhost:7070/traces/":  `has a path: give the endpoint alone, http://localhost:7070`,
		"http://localhost:7070/?x=1":     `has a path`,
		"s3://cascade/traces":            `not s3://`,
		"http://":                        `names no host`,
		"http://127.0.0.1:7070":          "",
		"http://gpu-box:7070/":           "",
		"https://s3.cluster.example.org": "",
	} {
		err := checkEndpoint(e)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", e, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want an error with %q", e, err, want)
		}
	}
}
