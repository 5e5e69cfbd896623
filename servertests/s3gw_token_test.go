package servertests_test

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// The server's own S3 keys, on its GraphQL API (with the tokens of
// transport_access_test.go).

// TestS3EndpointNeedsTheReadWriteToken: the S3 keys upload, so a read-only
// token is refused them.
func TestS3EndpointNeedsTheReadWriteToken(t *testing.T) {
	s := servertest.Server(t, withTokens, s3test.WithS3)
	const q = `{ s3Endpoint { url secretAccessKey } }`
	r := s.Post(t, roToken, q, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "FORBIDDEN" || strings.Contains(string(r.Data), s3test.Keys.SecretKey) {
		t.Fatalf("read-only: %s %+v", r.Data, r.Errors)
	}
	r = s.Post(t, rwToken, q, nil)
	if len(r.Errors) != 0 || !strings.Contains(string(r.Data), s3test.Keys.SecretKey) {
		t.Fatalf("read-write: %s %+v", r.Data, r.Errors)
	}
}
