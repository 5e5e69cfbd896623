package servertests_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestEndpointUploadResendsAChangedFile interrupts an upload to a real
// server after a multipart kernel arrived whole, changes one byte of that
// kernel in the source (same size, another modification time, as tracing
// again leaves it), and resumes: the kernel is sent again, not counted as
// already there on its size, and the bucket holds the new bytes; the
// files unchanged since are skipped, but not one that another client put
// without the mtime metadata `cascade upload` gives every object.
func TestEndpointUploadResendsAChangedFile(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	src := filepath.Join(t.TempDir(), "my-trace")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	const partSize = 5 << 20
	random := func(n int, seed uint64) []byte {
		b := make([]byte, n)
		rng := rand.New(rand.NewPCG(seed, 7))
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
		}
		return b
	}
	const name1, name5 = "kernel-1-ctx_0x55d2c3a1e4f0.trace", "kernel-5-ctx_0x55d2c3a1e4f0.trace"
	big1, big5 := random(2*partSize+4321, 1), random(2*partSize, 2)
	kernel1 := filepath.Join(src, "traces", name1)
	for name, data := range map[string][]byte{name1: big1, name5: big5} {
		if err := os.WriteFile(filepath.Join(src, "traces", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dest := s.TraceDir("retraced")

	// One file at a time, in order: when kernel-5's first part is sent,
	// every file before it is there (kernel-1 once its upload completes).
	ctx, cancel := context.WithCancel(context.Background())
	opts := upload.Options{
		Source: src, RunName: "retraced", Endpoint: s.S3.URL, Bucket: "cascade", Prefix: "traces",
		Keys: upload.Keys(s3test.Keys), PartSize: partSize, Parallel: 1,
		PartSent: func(key string, part int32) {
			if !strings.HasSuffix(key, name5) {
				return
			}
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if fi, err := os.Stat(filepath.Join(dest, "traces", name1)); err == nil && fi.Size() == int64(len(big1)) {
					break
				}
			}
			cancel()
		},
	}
	if _, err := upload.Upload(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v, want context.Canceled", err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "traces", name1)); err != nil || !bytes.Equal(got, big1) {
		t.Fatalf("%s after the interruption: %v, whole %v", name1, err, bytes.Equal(got, big1))
	}

	// The gateway keeps the time sent, of a multipart upload and of a
	// single PUT, and returns it on HEAD.
	c := client(s.S3.URL, s3test.Keys)
	for _, name := range []string{"traces/" + name1, "README.md"} {
		fi, err := os.Stat(filepath.Join(src, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/retraced/" + name)})
		if err != nil {
			t.Fatal(err)
		}
		ns := fi.ModTime().UnixNano() // rclone's form: seconds, fixed point
		want := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9), "0"), ".")
		if got := head.Metadata["mtime"]; got != want {
			t.Errorf("%s: HEAD metadata %v; want mtime %s", name, head.Metadata, want)
		}
	}
	// Another client puts README.md again, same bytes, without the time.
	readme, err := os.ReadFile(filepath.Join(src, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String("cascade"), Key: aws.String("traces/retraced/README.md"), Body: bytes.NewReader(readme),
	}); err != nil {
		t.Fatal(err)
	}

	big1[partSize+100] ^= 0xff // in the second part; the size stays
	if err := os.WriteFile(kernel1, big1, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(kernel1, later, later); err != nil {
		t.Fatal(err)
	}

	var progress bytes.Buffer
	opts.PartSent, opts.Progress, opts.Parallel = nil, &progress, 4
	res, err := upload.Upload(context.Background(), opts)
	if err != nil {
		t.Fatalf("resumed upload: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "traces", name1)); err != nil || !bytes.Equal(got, big1) {
		t.Fatalf("%s after the resume: %v; holds the changed source: %v", name1, err, bytes.Equal(got, big1))
	}
	if got, err := os.ReadFile(filepath.Join(dest, "traces", name5)); err != nil || !bytes.Equal(got, big5) {
		t.Fatalf("%s after the resume: %v, whole %v", name5, err, bytes.Equal(got, big5))
	}
	// Before kernel-5: README.md, 3 JSON files, kernel-1's .trace and
	// .traceg, kernel-2..4; all there, 7 unchanged.
	if res.Skipped != 7 {
		t.Errorf("resume skipped %d files as already there; want 7 (not %s, changed, nor README.md, put without a time): %+v", res.Skipped, name1, res)
	}
	if !strings.Contains(progress.String(), "(7 already there, 2 changed since: sent again)") {
		t.Errorf("progress line: %q", progress.String())
	}
	if res.PartsSkipped < 1 {
		t.Errorf("kernel-5's first part, sent before the interruption, was sent again: %+v", res)
	}
	if files, _ := readMetadata(t, dest); len(files) != len(res.Files) {
		t.Fatalf("metadata.json files list: %v", files)
	}
}
