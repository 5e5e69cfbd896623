package servertests_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestBytesGrowWhileFilesArrive: the guide's "kernel_count and bytes grow
// on each scan" holds while a large file is still arriving, not only once
// it is complete. A kernel trace sent as a multipart upload counts its
// stored parts, one sent in a single PUT the body read so far; the
// traceUpdated subscription shows both before either file is on disk,
// and once they are, the trace's bytes are its files', nothing counted
// twice. Both stood still at metadata.json's size until a file was
// complete.
func TestBytesGrowWhileFilesArrive(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	const id = "arriving"
	const mib = 1 << 20
	k1, k2 := "traces/kernel-1.trace", "traces/kernel-2.trace"
	key := func(rel string) *string { return aws.String("traces/" + id + "/" + rel) }
	meta, _ := json.Marshal(map[string]any{"files": []map[string]any{{"path": k1, "size": 10 * mib}, {"path": k2, "size": 6 * mib}}})
	metaSize := int64(len(meta))

	sub := s.Subscribe(t, "graphql-transport-ws",
		`subscription($id: ID!) { traceUpdated(id: $id) { state bytes kernelCount } }`, map[string]any{"id": id})
	var most int64
	// until reads updates until one has at least min bytes, and checks
	// that none counts more than the files come to.
	until := func(min int64, kernels int) {
		t.Helper()
		for {
			var r struct {
				TraceUpdated struct {
					State       string
					Bytes       int64
					KernelCount int
				}
			}
			if err := sub.Next(30*time.Second, &r); err != nil {
				t.Fatalf("waiting for %d bytes (the most seen %d): %v", min, most, err)
			}
			u := r.TraceUpdated
			most = max(most, u.Bytes)
			if most > metaSize+16*mib {
				t.Fatalf("bytes %d, more than the files' %d", u.Bytes, metaSize+16*mib)
			}
			if u.Bytes >= min {
				if u.KernelCount != kernels {
					t.Fatalf("%d bytes with kernelCount %d, want %d", u.Bytes, u.KernelCount, kernels)
				}
				return
			}
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: key("metadata.json"), Body: bytes.NewReader(meta)}); err != nil {
		t.Fatal(err)
	}

	// A multipart upload, one part of two stored.
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: key(k1)})
	if err != nil {
		t.Fatal(err)
	}
	part := func(n int32) types.CompletedPart {
		t.Helper()
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: key(k1), UploadId: up.UploadId, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(bytes.Repeat([]byte{'a' + byte(n)}, 5*mib))})
		if err != nil {
			t.Fatal(err)
		}
		return types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)}
	}
	first := part(1)
	until(metaSize+5*mib, 1)

	// A PUT whose body is still streaming, as a presigned URL takes one.
	ps, err := s3.NewPresignClient(c).PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: key(k2)})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPut, ps.URL, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 6 * mib
	put := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = &httpError{resp.StatusCode, string(b)}
			}
		}
		put <- err
	}()
	if _, err := pw.Write(bytes.Repeat([]byte("b"), 4*mib)); err != nil {
		t.Fatal(err)
	}
	// What the gateway has read of the 4 MiB written (some may wait in
	// the sockets' buffers), with the part stored: two kernels arriving.
	until(metaSize+5*mib+3*mib, 2)
	if _, err := pw.Write(bytes.Repeat([]byte("b"), 2*mib)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-put; err != nil {
		t.Fatalf("PUT %s: %v", k2, err)
	}

	second := part(2)
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: key(k1), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{first, second}}}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, s, id, "FAILED") // complete: the test server has no post-processor
	var r struct{ Trace struct{ Bytes int64 } }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { bytes } }`, map[string]any{"id": id}, &r)
	if want := treeBytes(t, s.TraceDir(id)); r.Trace.Bytes != want || want != metaSize+16*mib {
		t.Fatalf("bytes %d once complete, want the files' %d (%d)", r.Trace.Bytes, want, metaSize+16*mib)
	}
}

type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return http.StatusText(e.status) + ": " + e.body }
