package servertests_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestIdenticalReuploadKeepsTheTraceReady: a ready trace whose files are
// uploaded again through the S3 endpoint with the bytes they had (every
// file by PUT, as the SDK sends it, with a 32-bit CRC the gateway does
// not trust, so the bytes are compared; a kernel trace by multipart
// twice, the second time told by the parts' CRC64NVMEs) stays READY,
// without a warning, and its files keep their modification times: it is
// not post-processed again and its runs stay current. A file uploaded
// with other bytes of the same size still starts it over. Before the
// gateway kept times, the first PUT started the trace over.
func TestIdenticalReuploadKeepsTheTraceReady(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, s3test.WithS3, func(c *app.Config) { c.PostprocessCmd = testkit.FakePostprocessor(t, "ok") })
	sub := watch(t, s)
	const id = "same-again"
	cascadeUpload(t, s, rawTrace(t, "m", []int{1, 2}, 7), id)
	waitFor(t, sub, id, 20*time.Second, "READY", state("READY"))

	dir := s.TraceDir(id)
	upload := map[string]time.Time{} // the upload's files, not the post-processor's
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasSuffix(rel, ".g") || strings.Contains(rel, ".tracez") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		fi, err := d.Info()
		if err == nil {
			upload[filepath.ToSlash(rel)] = fi.ModTime()
		}
		return err
	})
	if err != nil || len(upload) < 4 {
		t.Fatalf("upload files %v: %v", upload, err)
	}

	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	key := func(rel string) *string { return aws.String("traces/" + id + "/" + rel) }
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put := func(rel string, body []byte) {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: key(rel), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s: %v", rel, err)
		}
	}
	multipart := func(rel string, body []byte) {
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: key(rel)})
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: key(rel), UploadId: mp.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: key(rel), UploadId: mp.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		if err != nil {
			t.Fatalf("complete %s: %v", rel, err)
		}
	}
	const raw = "traces/kernel-1-ctx_0x1.trace"
	for rel := range upload {
		put(rel, read(rel))
	}
	multipart(raw, read(raw))
	multipart(raw, read(raw))

	// Three scans: any update must still be READY without a warning.
	deadline := time.Now().Add(3 * s.Config.ScanInterval)
	for {
		var r struct{ TraceUpdated trace }
		err := sub.Next(time.Until(deadline), &r)
		if err == servertest.ErrTimeout {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if tr := r.TraceUpdated; tr.ID == id && (tr.State != "READY" || len(tr.Warnings) > 0) {
			t.Fatalf("after the same bytes were uploaded again: %s, warnings %q", tr.State, tr.Warnings)
		}
	}
	for rel, was := range upload {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || !fi.ModTime().Equal(was) {
			t.Errorf("%s: modification time %v, was %v (%v)", rel, fi.ModTime(), was, err)
		}
	}

	put(raw, bytes.ToUpper(read(raw))) // other bytes, the same size
	_, tr := states(t, sub, id, func(tr trace) bool { return tr.State == "READY" && len(tr.Warnings) > 0 })
	if want := "data files changed after the upload completed (" + raw + ")"; !strings.HasPrefix(tr.Warnings[0], want) {
		t.Fatalf("warnings %q, want one starting %q", tr.Warnings, want)
	}
}
