package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/s3gw"
)

// startS3 serves the bucket directory over S3 when the config asks for it.
func (m *Main) startS3(ctx context.Context) error {
	cfg := m.Config
	if cfg.S3Addr == "" {
		return nil
	}
	keys := cfg.S3Keys
	if keys.AccessKey == "" || keys.SecretKey == "" {
		file := cfg.S3KeyFile
		if file == "" {
			file = filepath.Join(cfg.DataDir, "s3-keys.env")
		}
		var err error
		if keys, m.S3KeysCreated, err = s3gw.LoadOrCreateKeys(file); err != nil {
			return fmt.Errorf("S3 keys: %w", err)
		}
	}
	if err := checkFree("the S3 endpoint's address", cfg.S3Addr, "--s3-addr", "CASCADE_S3_ADDR"); err != nil {
		return err
	}
	g, err := s3gw.Start(ctx, s3gw.Config{
		Root:   filepath.Join(cfg.DataDir, "s3"),
		Bucket: cfg.Bucket,
		Addr:   cfg.S3Addr,
		Keys:   keys,
		Logger: m.log,

		ReadOnlyKeys: cfg.S3ReadOnlyKeys,
	})
	if err != nil {
		return err
	}
	m.s3 = g
	m.S3 = &cascade.S3Endpoint{
		URL:       s3gw.PublicURL(g.URL, cfg.S3URL),
		Bucket:    cfg.Bucket,
		Prefix:    cfg.Prefix,
		Region:    s3gw.Region,
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
