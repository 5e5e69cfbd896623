package servertests_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// The server's tests that speak S3 are here and in upload/ rather than
// beside the rest (package app, graph/transport), so that those test
// binaries link no S3 server.

func waitTrace(t *testing.T, s *servertest.TestServer, id, state string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "trace "+id+" "+state, func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
		return r.Trace != nil && r.Trace.State == state
	})
}

func used(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// TestS3UploadOnAFullDisk: a PUT larger than the room left fails with
// S3's InsufficientStorage and leaves nothing; the trace already there and
// the database are untouched, and the next upload that fits goes through
// to the Traces list.
func TestS3UploadOnAFullDisk(t *testing.T) {
	servertest.ForEachServerOnSmallDisk(t, "24m", func(t *testing.T, s *servertest.TestServer) {
		src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: "qs"}); err != nil {
			t.Fatal(err)
		}
		waitTrace(t, s, "qs", "READY")
		before := s.TraceNow(t, "qs")
		bucket := filepath.Join(s.Config.DataDir, "s3", "cascade")
		beforeUsed := used(t, s.Config.DataDir)

		c := s3.New(s3.Options{
			BaseEndpoint: aws.String(s.S3.URL), Region: "us-east-1", UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(s3test.Keys.AccessKey, s3test.Keys.SecretKey, ""),
		})
		ctx := context.Background()
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/huge/traces/kernel-1.trace"), Body: bytes.NewReader(make([]byte, 32<<20))})
		var api smithy.APIError
		if !errors.As(err, &api) || api.ErrorCode() != "InsufficientStorage" {
			t.Fatalf("PutObject of 32 MiB on 24: %v, want InsufficientStorage", err)
		}
		if _, err := os.Stat(filepath.Join(bucket, "traces", "huge", "traces", "kernel-1.trace")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the failed object: %v", err)
		}
		if tmp, _ := filepath.Glob(filepath.Join(bucket, ".sgwtmp", "*")); len(tmp) > 0 {
			t.Errorf("left in .sgwtmp: %v", tmp)
		}
		if u := used(t, s.Config.DataDir); u > beforeUsed+512<<10 {
			t.Errorf("%d bytes in use after the failed PUT, %d before", u, beforeUsed)
		}
		if after := s.TraceNow(t, "qs"); after != before {
			t.Fatalf("the trace: %+v, before %+v", after, before)
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/next/traces/kernel-1.trace"), Body: bytes.NewReader(make([]byte, 1<<20))}); err != nil {
			t.Fatalf("1 MiB after the failed PUT: %v", err)
		}
		waitTrace(t, s, "next", "UPLOADING")
	}, s3test.WithS3)
}
