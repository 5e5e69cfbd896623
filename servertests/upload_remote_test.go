package servertests_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestEndpointUploadResumes uploads a trace with a 40 MiB kernel to a real
// server's S3 endpoint, interrupts it after three of its eight parts, and
// runs it again: the parts already there are not sent again, the kernel
// lands whole, and the trace goes UPLOADING → READY.
func TestEndpointUploadResumes(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	src := filepath.Join(t.TempDir(), "my-trace")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 40<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(big); i += 8 {
		binary.LittleEndian.PutUint64(big[i:], rng.Uint64())
	}
	if err := os.WriteFile(filepath.Join(src, "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated(id: "resumed") { state kernelCount } }`, nil)

	var mu sync.Mutex
	var sent []int32
	ctx, cancel := context.WithCancel(context.Background())
	opts := upload.Options{
		Source: src, RunName: "resumed", Endpoint: s.S3.URL, Bucket: "cascade", Prefix: "traces",
		Keys: upload.Keys(s3test.Keys), PartSize: 5 << 20, Parallel: 2,
		PartSent: func(key string, part int32) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, part)
			if len(sent) == 3 {
				cancel()
			}
		},
	}
	_, err := upload.Upload(ctx, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v, want context.Canceled", err)
	}
	first := len(sent)
	dest := s.TraceDir("resumed")
	for _, name := range []string{"metadata.json", "traces/kernel-5-ctx_0x55d2c3a1e4f0.trace"} {
		if _, err := os.Stat(filepath.Join(dest, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s after the interruption: %v, want it absent", name, err)
		}
	}

	sent = nil
	opts.PartSent = func(key string, part int32) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, part)
	}
	var progress bytes.Buffer
	opts.Progress = &progress
	res, err := upload.Upload(context.Background(), opts)
	if err != nil {
		t.Fatalf("resumed upload: %v", err)
	}
	if res.PartsSkipped < 3 || res.PartsSent+res.PartsSkipped != 8 || len(sent) != res.PartsSent {
		t.Fatalf("resume sent %d parts %v and skipped %d, after %d sent before; want the 8 parts split between them", res.PartsSent, sent, res.PartsSkipped, first)
	}
	if res.Skipped == 0 {
		t.Errorf("no whole file counted as already there: %+v", res)
	}
	if !strings.Contains(progress.String(), "sending") {
		t.Errorf("progress output: %q", progress.String())
	}
	got, err := os.ReadFile(filepath.Join(dest, "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("kernel after the resumed upload: %v, %d bytes, equal %v", err, len(got), bytes.Equal(got, big))
	}
	files, _ := readMetadata(t, dest)
	if len(files) != len(res.Files) || len(files) < 10 {
		t.Fatalf("metadata.json files list: %v", files)
	}

	var states []string
	for len(states) == 0 || states[len(states)-1] != "READY" {
		var r struct{ TraceUpdated struct{ State string } }
		if err := sub.Next(30*time.Second, &r); err != nil {
			t.Fatalf("after %v: %v", states, err)
		}
		if len(states) == 0 || states[len(states)-1] != r.TraceUpdated.State {
			states = append(states, r.TraceUpdated.State)
		}
		if r.TraceUpdated.State == "FAILED" {
			t.Fatalf("states %v", states)
		}
	}
	if states[0] != "UPLOADING" {
		t.Fatalf("states %v", states)
	}

	// A finished trace is not overwritten without --force.
	if _, err := upload.Upload(context.Background(), opts); !errors.Is(err, upload.ErrExists) {
		t.Fatalf("upload over a finished trace: %v, want ErrExists", err)
	}

	// --force of the same upload sends metadata.json alone, and the
	// trace stays READY (every file was sent again, and the trace
	// started over).
	processed := filepath.Join(dest, "traces", "kernelslist.g")
	before, err := os.Stat(processed)
	if err != nil {
		t.Fatal(err)
	}
	opts.Force, sent = true, nil
	if res, err = upload.Upload(context.Background(), opts); err != nil {
		t.Fatalf("--force of the same upload: %v", err)
	}
	after, err := os.Stat(processed)
	if err != nil || !os.SameFile(before, after) || res.Copied != 0 || res.Removed != 0 || len(sent) != 0 {
		t.Fatalf("--force of the same upload: kernelslist.g %v (the same file %v), %d files and %d parts sent, %d removed; want it kept and nothing sent or removed",
			err, err == nil && os.SameFile(before, after), res.Copied, len(sent), res.Removed)
	}
	if st := s.TraceNow(t, "resumed").State; st != "READY" {
		t.Fatalf("after --force of the same upload: %s", st)
	}

	// One file changed since (same size, another time): --force sends it
	// alone, not every file again (QA), and the trace is ready again.
	stats := filepath.Join(src, "traces", "stats_ctx_0x55d2c3a1e4f0")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(stats, later, later); err != nil {
		t.Fatal(err)
	}
	if res, err = upload.Upload(context.Background(), opts); err != nil {
		t.Fatalf("--force after a change: %v", err)
	}
	if res.Copied != 1 || len(sent) != 0 || res.Skipped != len(res.Files)-1 {
		t.Fatalf("--force after one file changed: %d files and %d parts sent, %d skipped of %d; want that file alone", res.Copied, len(sent), res.Skipped, len(res.Files))
	}
	testkit.Eventually(t, 30*time.Second, "ready again", func() bool { return s.TraceNow(t, "resumed").State == "READY" })
}

// readMetadata reads dest's metadata.json: its files list, and the rest.
func readMetadata(t *testing.T, dest string) ([]upload.File, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dest, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []upload.File `json:"files"`
	}
	var all map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("metadata.json: %v\n%s", err, data)
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	delete(all, "files")
	return doc.Files, all
}

// TestEndpointUploadIgnoresDotfilesThere: a dotfile already under the
// trace's prefix (a .DS_Store an aws s3 cp of the folder stored) is no
// object of another upload, as a dotfile in a local destination is not:
// the upload goes ahead and leaves it there.
func TestEndpointUploadIgnoresDotfilesThere(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	for _, key := range []string{"traces/dotted/.DS_Store", "traces/dotted/.git/HEAD"} {
		if _, err := client(s.S3.URL, s3test.Keys).PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String("cascade"), Key: aws.String(key), Body: strings.NewReader("x"),
		}); err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
	}
	opts := upload.Options{
		Source: filepath.Join(quickstartCopy(t), "my-trace"), RunName: "dotted", Endpoint: s.S3.URL, Bucket: "cascade", Prefix: "traces",
		Keys: upload.Keys(s3test.Keys),
	}
	if _, err := upload.Upload(context.Background(), opts); err != nil {
		t.Fatalf("upload beside dotfiles: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.TraceDir("dotted"), ".DS_Store")); err != nil {
		t.Errorf(".DS_Store after the upload: %v", err)
	}
	testkit.Eventually(t, 30*time.Second, "ready", func() bool { return s.TraceNow(t, "dotted").State == "READY" })
}
