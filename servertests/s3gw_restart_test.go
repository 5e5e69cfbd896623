package servertests_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/s3gw"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestRestartReleasesAnUnfinishedCompletion: a server killed while it
// joined a multipart upload leaves the upload's directory claimed
// (renamed <id>.<token>.inprogress) and without the parts it had moved into
// the object, which died with it. The next start gives the upload back: it
// is listed with the parts it still has, completing it fails with
// InvalidPart rather than answering success with no object (the backend's
// answer to a claimed upload), and once the missing part is sent again it
// completes whole.
func TestRestartReleasesAnUnfinishedCompletion(t *testing.T) {
	testkit.SkipShort(t, "starts the S3 gateway")
	root := t.TempDir()
	ctx := context.Background()
	start := func() *s3gw.Gateway {
		t.Helper()
		g, err := s3gw.Start(ctx, s3gw.Config{Root: root, Bucket: "cascade", Addr: "127.0.0.1:0", Keys: s3test.Keys})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := start()
	c := client(g.URL, s3test.Keys)
	key := "traces/killed/traces/kernel-1.trace"
	bodies := [][]byte{bytes.Repeat([]byte("1"), 5<<20), bytes.Repeat([]byte("2"), 5<<20), []byte("3")}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	etags := make([]*string, len(bodies))
	send := func(n int32) {
		t.Helper()
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(bodies[n-1])})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		etags[n-1] = out.ETag
	}
	complete := func() error {
		var parts []types.CompletedPart
		for i, etag := range etags {
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: etag})
		}
		_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key),
			UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		return err
	}
	for n := int32(1); n <= 3; n++ {
		send(n)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	// What a server killed after joining part 1 leaves.
	dirs, _ := filepath.Glob(filepath.Join(root, "cascade", ".sgwtmp", "multipart", "*", *up.UploadId))
	if len(dirs) != 1 {
		t.Fatalf("upload directories: %v", dirs)
	}
	claimed := dirs[0] + ".0123abcd-3.inprogress"
	if err := os.Rename(dirs[0], claimed); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(claimed, "1")); err != nil {
		t.Fatal(err)
	}

	g = start()
	defer g.Close()
	c = client(g.URL, s3test.Keys)
	ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("cascade")})
	if err != nil || len(ups.Uploads) != 1 || aws.ToString(ups.Uploads[0].UploadId) != *up.UploadId {
		t.Fatalf("ListMultipartUploads after the restart: %v; want the upload alone", err)
	}
	listed, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("cascade"), Key: aws.String(key), UploadId: up.UploadId})
	if err != nil || len(listed.Parts) != 2 || aws.ToInt32(listed.Parts[0].PartNumber) != 2 {
		t.Fatalf("ListParts after the restart: %v, %d parts; want parts 2 and 3", err, len(listed.Parts))
	}
	if err := complete(); apiCode(err) != "InvalidPart" {
		t.Fatalf("CompleteMultipartUpload without part 1: %v, want InvalidPart", err)
	}
	if _, err := os.Stat(filepath.Join(root, "cascade", filepath.FromSlash(key))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("object after a completion without part 1: %v, want none", err)
	}
	send(1)
	if err := complete(); err != nil {
		t.Fatalf("CompleteMultipartUpload with part 1 sent again: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(root, "cascade", filepath.FromSlash(key)))
	if want := bytes.Join(bodies, nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("object: %v, %d bytes, want %d", err, len(got), len(want))
	}
}

// TestTraceFolderTooLongIsRefused: a key whose trace folder is longer than
// a trace id can be (cascade.MaxTraceIDLen: the server names its work
// files after it) is refused, by PutObject and CreateMultipartUpload
// alike, with an error that names the limit, before anything is written;
// a trace folder of the longest id is taken, and so is a long name beside
// the trace folders or outside the prefix.
func TestTraceFolderTooLongIsRefused(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	long := strings.Repeat("r", cascade.MaxTraceIDLen+1)
	for _, key := range []string{"traces/" + long + "/metadata.json", "traces/" + strings.Repeat("r", 255) + "/traces/kernel-1.trace", "traces/" + long + "/"} {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String(key), Body: strings.NewReader("{}")})
		if code := apiCode(err); code != "InvalidArgument" || !strings.Contains(err.Error(), fmt.Sprintf("a trace id holds at most %d bytes", cascade.MaxTraceIDLen)) {
			t.Errorf("PutObject %.30q…: %v, want InvalidArgument naming the limit", key, err)
		}
		_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key)})
		if code := apiCode(err); code != "InvalidArgument" || !strings.Contains(err.Error(), fmt.Sprintf("at most %d bytes", cascade.MaxTraceIDLen)) {
			t.Errorf("CreateMultipartUpload %.30q…: %v, want InvalidArgument naming the limit", key, err)
		}
	}
	if _, err := os.Stat(s.TraceDir(long)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused trace folder: %v, want none", err)
	}
	for _, key := range []string{"traces/" + strings.Repeat("r", cascade.MaxTraceIDLen) + "/metadata.json", "traces/" + long, "other/" + long + "/x"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String(key), Body: strings.NewReader("{}")}); err != nil {
			t.Errorf("PutObject %.30q…: %v", key, err)
		}
	}
}
