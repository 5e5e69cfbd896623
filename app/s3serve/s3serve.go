// Package s3serve is the server's S3 endpoint: app.S3Server on package
// s3gw. The cascade command sets it in app.Config.S3Server, and so do the
// tests that speak S3 (testkit/s3test); app does not import s3gw, so that
// the test binaries that start a server without S3 link no S3 server.
package s3serve

import (
	"context"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/s3gw"
)

// Server starts s3gw's gateway.
type Server struct{}

var _ app.S3Server = Server{}

// LoadOrCreateKeys is s3gw.LoadOrCreateKeys.
func (Server) LoadOrCreateKeys(file string) (cascade.S3Keys, bool, error) {
	return s3gw.LoadOrCreateKeys(file)
}

// Start starts s3gw's gateway.
func (Server) Start(ctx context.Context, c app.S3Config) (app.S3Gateway, error) {
	g, err := s3gw.Start(ctx, s3gw.Config{
		Root:         c.Root,
		Bucket:       c.Bucket,
		Prefix:       c.Prefix,
		Addr:         c.Addr,
		Keys:         c.Keys,
		ReadOnlyKeys: c.ReadOnlyKeys,
		// 0 is the gateway's default, below 0 never.
		MultipartExpiry: c.MultipartExpiry,
		Logger:          c.Logger,
	})
	if err != nil {
		return nil, err
	}
	return gateway{g, s3gw.PublicURL(g.URL, c.PublicURL)}, nil
}

// gateway is a running s3gw.Gateway and the URL clients reach it at.
type gateway struct {
	g   *s3gw.Gateway
	url string
}

func (g gateway) URL() string            { return g.url }
func (g gateway) Region() string         { return s3gw.Region }
func (g gateway) UploadsInFlight() int64 { return g.g.UploadsInFlight() }
func (g gateway) Writing(bucket, prefix string, since time.Time) bool {
	return g.g.Writing(bucket, prefix, since)
}
func (g gateway) Arriving(bucket, prefix string) map[string]int64 {
	return g.g.Arriving(bucket, prefix)
}
func (g gateway) Exited() <-chan struct{} { return g.g.Exited() }
func (g gateway) Err() error              { return g.g.Err() }
func (g gateway) Close() error            { return g.g.Close() }
