package s3gw

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestExpireUploads: of a bucket's unfinished multipart uploads, those
// nothing was written to (no part, no start) for longer than the expiry
// are aborted and their parts leave the disk; one with a recent part
// stays though it began long ago, and so does one whose object is being
// written now. An aborted upload's object counts as written no more.
func TestExpireUploads(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	g := startTest(t, root)
	c := g.testClient()
	bucket := "cascade"
	part := bytes.Repeat([]byte("a kernel trace's part\n"), 1<<16)
	start := func(key string, parts int) string {
		t.Helper()
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key, ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme})
		if err != nil {
			t.Fatal(err)
		}
		for i := range parts {
			if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part), ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme}); err != nil {
				t.Fatal(err)
			}
		}
		return *mp.UploadId
	}
	left := start("traces/left/traces/kernel-1.trace", 2)
	empty := start("traces/empty/traces/kernel-1.trace", 0)
	resumed := start("traces/resumed/traces/kernel-1.trace", 1)
	busy := start("traces/busy/traces/kernel-1.trace", 1)
	tmp := filepath.Join(root, bucket, ".sgwtmp")
	partsOf := func(id string) int {
		n := 0
		filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.Contains(p, id) {
				n++
			}
			return nil
		})
		return n
	}
	if partsOf(left) != 2 {
		t.Fatalf("%d parts of the upload on disk, want 2: the test does not look where they are", partsOf(left))
	}

	// A day later, with an expiry of half a day; the resumed upload had a
	// part written an hour ago, and the busy one has a write running.
	now := time.Now().Add(24 * time.Hour)
	res, err := g.backend.ListParts(ctx, &s3.ListPartsInput{Bucket: &bucket, Key: aws.String("traces/resumed/traces/kernel-1.trace"), UploadId: &resumed, MaxParts: aws.Int32(1000)})
	if err != nil || len(res.Parts) != 1 {
		t.Fatalf("parts of the resumed upload: %v, %v", res.Parts, err)
	}
	recent := now.Add(-time.Hour)
	if err := chtimesParts(tmp, resumed, recent); err != nil {
		t.Fatal(err)
	}
	busyKey := "traces/busy/traces/kernel-1.trace"
	end := g.uploads.begin(&bucket, &busyKey)
	n, parts, size, err := expireUploads(ctx, g.backend, &g.uploads, bucket, now, 12*time.Hour)
	end()
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || parts != 2 || size != 2*int64(len(part)) {
		t.Errorf("aborted %d uploads, %d parts, %d bytes; want 2, 2, %d", n, parts, size, 2*len(part))
	}
	if partsOf(left) != 0 || partsOf(empty) != 0 {
		t.Errorf("parts of aborted uploads left on disk: %d, %d", partsOf(left), partsOf(empty))
	}
	if partsOf(resumed) != 1 || partsOf(busy) != 1 {
		t.Errorf("parts of the resumed and the busy upload: %d, %d; want 1 each", partsOf(resumed), partsOf(busy))
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, u := range out.Uploads {
		open = append(open, strings.Split(*u.Key, "/")[1])
	}
	if strings.Join(open, " ") != "busy resumed" {
		t.Errorf("uploads still open: %v, want busy and resumed", open)
	}
}

// chtimesParts sets the modification time of upload id's directory
// under dir (the backend's Initiated, which each part written moves) and
// of its parts.
func chtimesParts(dir, id string, at time.Time) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(p, id) {
			paths = append(paths, p)
		}
		return err
	})
	for _, p := range paths {
		if err := os.Chtimes(p, at, at); err != nil {
			return err
		}
	}
	return err
}

// testKeys sign the requests of the gateways startTest starts.
var testKeys = Keys{AccessKey: "S3GWTESTACCESSKEY001", SecretKey: "s3gw-test-secret-0123456789abcdefghijkl"}

// startTest starts a gateway on root with the bucket "cascade", which
// expires no upload on its own; the test's end closes it. A -short run
// skips the test.
func startTest(t *testing.T, root string) *Gateway {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an S3 endpoint")
	}
	g, err := Start(context.Background(), Config{Root: root, Bucket: "cascade", Addr: "127.0.0.1:0", Keys: testKeys, MultipartExpiry: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestOpenUploadsSurviveARestart: a multipart upload open when the server
// stopped counts as open after the next start (Gateway.Writing), from the
// time its newest part was written: the restart forgot it, and a trace
// uploaded without a files list, one kernel's parts still arriving, was
// taken for complete and failed on the kernel it lacked (QA). One whose
// parts are older than openIdle does not hold its trace.
func TestOpenUploadsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	g := startTest(t, root)
	c := g.testClient()
	bucket := "cascade"
	ids := map[string]string{}
	for _, trace := range []string{"t1", "t2"} {
		key := "traces/" + trace + "/traces/kernel-3.trace"
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))}); err != nil {
			t.Fatal(err)
		}
		ids[trace] = *mp.UploadId
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-openIdle - time.Minute) // t2's client went away long ago
	if err := chtimesParts(filepath.Join(root, bucket, ".sgwtmp"), ids["t2"], old); err != nil {
		t.Fatal(err)
	}

	g = startTest(t, root)
	after := time.Now().Add(time.Second) // asked of the present only
	if !g.Writing(bucket, "traces/t1/", after) {
		t.Error("an upload open before the restart, written to a moment ago, does not hold its trace")
	}
	if g.Writing(bucket, "traces/t2/", after) {
		t.Error("an upload whose last part is older than openIdle holds its trace")
	}
	// Its stored parts count as arrived (Arriving), for the trace's bytes.
	if got := g.Arriving(bucket, "traces/"); !maps.Equal(got, map[string]int64{"t1/traces/kernel-3.trace": 4}) {
		t.Errorf("arriving after the restart: %v, want t1's 4-byte part", got)
	}
}

// testClient is an S3 client of g signed with testKeys.
func (g *Gateway) testClient() *s3.Client {
	return s3.New(s3.Options{BaseEndpoint: aws.String(g.URL), Region: Region, UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(testKeys.AccessKey, testKeys.SecretKey, "")})
}
