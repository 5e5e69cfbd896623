package servertests_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/s3gw"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestLeftMultipartUploadIsAborted: a multipart upload a client left (it
// crashed, and never aborted it) keeps its parts in the bucket's .sgwtmp,
// where no scan sees them, until the server aborts it once nothing was
// written to it for CASCADE_S3_MULTIPART_EXPIRY (a second here): its parts
// leave the disk and the listing of uploads. They stayed for ever (QA).
func TestLeftMultipartUploadIsAborted(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3, func(c *app.Config) { c.S3MultipartExpiry = time.Second })
	ctx := context.Background()
	c := client(s.S3.URL, s3gw.Keys(s3test.Keys))
	bucket, key := "cascade", "traces/left/traces/kernel-1.trace"
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key, ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme})
	if err != nil {
		t.Fatal(err)
	}
	part := bytes.Repeat([]byte("x"), 5<<20)
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(part), ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme}); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(s.DataDir, "s3", bucket, ".sgwtmp")
	held := func() int64 { // the parts' bytes; what the abort removes meanwhile is gone
		var n int64
		filepath.WalkDir(tmp, func(_ string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		return n
	}
	if held() < int64(len(part)) {
		t.Fatalf("%d bytes in %s after a part of %d: the test does not look where the parts are", held(), tmp, len(part))
	}
	deadline := time.Now().Add(30 * time.Second)
	for held() >= int64(len(part)) {
		if time.Now().After(deadline) {
			t.Fatalf("the upload's part still holds %d bytes 30 s after its second of expiry", held())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Errorf("%d uploads still listed", len(out.Uploads))
	}
}
