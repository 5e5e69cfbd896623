package servertests_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestStreamingUploadWaitsForAnOpenMultipart: a trace uploaded without a
// files list, as the streaming profiler uploads one, whose metadata.json,
// kernel list and stats are in while its kernel trace is still a
// multipart upload (its parts hidden, nothing changing on disk between
// them) stays UPLOADING, however quiet, until the upload completes; then
// it is complete (here it fails for the test server's missing
// post-processor, which only a complete upload reaches). It went to
// PROCESSING after one quiet scan interval and failed on the missing
// kernel trace.
func TestStreamingUploadWaitsForAnOpenMultipart(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	const id = "streamed-mp"
	put := func(key, body string) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/" + id + "/" + key), Body: bytes.NewReader([]byte(body))}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	put("metadata.json", `{"model": "m"}`)
	put("traces/kernelslist", "kernel-1.trace\n")
	put("traces/stats.csv", "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"+
		"kernel-1.trace, _Z6vecAddPdS_S_i, 1, 1, 1, 1, 32, 1, 1, 32, 10,10\n")
	key := aws.String("traces/" + id + "/traces/kernel-1.trace")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: key, UploadId: up.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader([]byte("-kernel name = _Z6vecAddPdS_S_i\n"))})
	if err != nil {
		t.Fatal(err)
	}
	waitTrace(t, s, id, "UPLOADING")
	// Ten of the test server's scan intervals (200 ms), its tree quiet.
	time.Sleep(2 * time.Second)
	waitTrace(t, s, id, "UPLOADING")

	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, s, id, "FAILED")
	var r struct{ Trace struct{ Error string } }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { error } }`, map[string]any{"id": id}, &r)
	if !bytes.Contains([]byte(r.Trace.Error), []byte("post-processor")) {
		t.Fatalf("error %q, want the missing post-processor's", r.Trace.Error)
	}
}
