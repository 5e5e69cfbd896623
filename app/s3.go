package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"time"

	"github.com/cascade-sim/cascade"
)

// S3Server is what serves the S3 endpoint: s3serve.Server, which runs
// package s3gw. The server takes it in Config.S3Server rather than
// importing s3gw, whose S3 library is most of the server's dependencies:
// only the cascade command and the tests that speak S3 link it.
type S3Server interface {
	// LoadOrCreateKeys reads the key pair from file, or makes a new one
	// and writes it there (created).
	LoadOrCreateKeys(file string) (keys cascade.S3Keys, created bool, err error)
	// Start serves the bucket directory over S3 at c.Addr. It returns once
	// the endpoint accepts connections.
	Start(ctx context.Context, c S3Config) (S3Gateway, error)
}

// S3Config is what S3Server.Start is given.
type S3Config struct {
	// Root is the storage root, <data dir>/s3; Bucket is in it, and the
	// trace folders under Prefix in Bucket.
	Root, Bucket, Prefix string
	// Addr is the listen address; PublicURL, when set, the URL clients
	// reach it at (Config.S3URL).
	Addr, PublicURL    string
	Keys, ReadOnlyKeys cascade.S3Keys
	// MultipartExpiry is Config.S3MultipartExpiry.
	MultipartExpiry time.Duration
	Logger          *slog.Logger
}

// S3Gateway is a running S3 endpoint.
type S3Gateway interface {
	// URL is the endpoint as clients reach it, and Region the region they
	// sign with.
	URL() string
	Region() string
	// UploadsInFlight is how many writes are under way (a metric).
	UploadsInFlight() int64
	// Writing reports whether an object of bucket under prefix is being
	// written, has a multipart upload open and in use, or had a write
	// begin or end at or after since.
	Writing(bucket, prefix string, since time.Time) bool
	// Arriving gives the bytes arrived of each object of bucket under
	// prefix being uploaded, by key relative to prefix.
	Arriving(bucket, prefix string) map[string]int64
	// Exited is closed when the endpoint stopped, Err then says why.
	Exited() <-chan struct{}
	Err() error
	Close() error
}

// writing reports whether the S3 endpoint is writing a file of the trace
// id, or a write of one began or ended at or after since (scanner.Config
// and postproc.Config's Writing).
func (m *Main) writing(id string, since time.Time) bool {
	return m.s3 != nil && m.s3.Writing(m.Config.Bucket, m.traceKeys(id), since)
}

// traceKeys is the key prefix of the trace id's objects in the bucket.
func (m *Main) traceKeys(id string) string { return path.Join(m.Config.Prefix, id) + "/" }

// arriving gives the bytes arrived through the S3 endpoint of each file
// of the trace id being uploaded (scanner.Config's Arriving).
func (m *Main) arriving(id string) map[string]int64 {
	if m.s3 == nil {
		return nil
	}
	return m.s3.Arriving(m.Config.Bucket, m.traceKeys(id))
}

// startS3 serves the bucket directory over S3 when the config asks for it.
func (m *Main) startS3(ctx context.Context) error {
	cfg := m.Config
	if cfg.S3Addr == "" {
		return nil
	}
	if cfg.S3Server == nil {
		return errors.New("S3 endpoint: the S3 address is set but no S3 server is (Config.S3Server)")
	}
	keys := cfg.S3Keys
	if keys.AccessKey == "" || keys.SecretKey == "" {
		file := cfg.S3KeyFile
		if file == "" {
			file = filepath.Join(cfg.DataDir, "s3-keys.env")
		}
		var err error
		if keys, m.S3KeysCreated, err = cfg.S3Server.LoadOrCreateKeys(file); err != nil {
			return fmt.Errorf("S3 keys: %w", err)
		}
	}
	if err := checkFree("the S3 endpoint's address", cfg.S3Addr, "--s3-addr", "CASCADE_S3_ADDR"); err != nil {
		return err
	}
	g, err := cfg.S3Server.Start(ctx, S3Config{
		Root:      filepath.Join(cfg.DataDir, "s3"),
		Bucket:    cfg.Bucket,
		Prefix:    cfg.Prefix,
		Addr:      cfg.S3Addr,
		PublicURL: cfg.S3URL,
		Keys:      keys,
		Logger:    m.log,

		ReadOnlyKeys:    cfg.S3ReadOnlyKeys,
		MultipartExpiry: cfg.S3MultipartExpiry,
	})
	if err != nil {
		return err
	}
	m.s3 = g
	m.S3 = &cascade.S3Endpoint{
		URL:       g.URL(),
		Bucket:    cfg.Bucket,
		Prefix:    cfg.Prefix,
		Region:    g.Region(),
		AccessKey: keys.AccessKey,
		SecretKey: keys.SecretKey,
	}
	return nil
}

func (m *Main) closeS3() error {
	if m.s3 == nil {
		return nil
	}
	select {
	case <-m.s3Closing:
	default:
		close(m.s3Closing)
	}
	return m.s3.Close()
}
