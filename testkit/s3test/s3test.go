// Package s3test turns on the S3 endpoint of a test server
// (testkit/servertest). It is apart from servertest so that only the tests
// that speak S3 link the S3 server (package s3gw), the largest part of the
// server's dependencies.
package s3test

import (
	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/app/s3serve"
)

// Keys is the key pair of the S3 endpoint that WithS3 turns on.
var Keys = cascade.S3Keys{AccessKey: "CASCADETESTACCESSKEY", SecretKey: "cascade-test-secret-key-0123456789abcdef"}

// WithS3 is a servertest.Server option that turns on the S3 endpoint on a
// free loopback port, signed with Keys. Only one runs per process at a
// time, so tests using it do not run in parallel.
func WithS3(c *app.Config) {
	c.S3Addr = "127.0.0.1:0"
	c.S3Keys = Keys
	c.S3Server = s3serve.Server{}
}
