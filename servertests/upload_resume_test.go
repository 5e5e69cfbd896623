package servertests_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// TestEndpointUploadResendsChangedPart interrupts an upload to a real
// server after three parts, changes the bytes of one part that was sent
// (not its size) in the source, and resumes: the server's ETags are
// checksums, not MD5s, and the changed part is sent again while the
// others are kept; the object is the new content.
func TestEndpointUploadResendsChangedPart(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	src := filepath.Join(t.TempDir(), "my-trace")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	const partSize = 5 << 20
	big := make([]byte, 6*partSize+12345)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i+8 <= len(big); i += 8 {
		binary.LittleEndian.PutUint64(big[i:], rng.Uint64())
	}
	kernel := filepath.Join(src, "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace")
	if err := os.WriteFile(kernel, big, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []int32
	record := func(cancel func()) func(string, int32) {
		return func(key string, part int32) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, part)
			if len(sent) == 3 && cancel != nil {
				cancel()
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := upload.Options{
		Source: src, RunName: "changed", Endpoint: s.S3.URL, Bucket: "cascade", Prefix: "traces",
		Keys: upload.Keys(s3test.Keys), PartSize: partSize, Parallel: 2, PartSent: record(cancel),
	}
	if _, err := upload.Upload(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v, want context.Canceled", err)
	}
	first := slices.Clone(sent)
	changed := first[0]
	off := int(changed-1)*partSize + 100
	big[off] ^= 0xff
	if err := os.WriteFile(kernel, big, 0o644); err != nil {
		t.Fatal(err)
	}

	sent = nil
	opts.PartSent = record(nil)
	res, err := upload.Upload(context.Background(), opts)
	if err != nil {
		t.Fatalf("resumed upload: %v", err)
	}
	if !slices.Contains(sent, changed) {
		t.Errorf("part %d changed in the source but was not sent again: sent %v, after %v", changed, sent, first)
	}
	for _, p := range first[1:] {
		if slices.Contains(sent, p) {
			t.Errorf("part %d, unchanged and already there, was sent again: sent %v, after %v", p, sent, first)
		}
	}
	if res.PartsSkipped < 2 || res.PartsSent+res.PartsSkipped != 7 {
		t.Errorf("resume sent %d parts and skipped %d; want 7 split between them, at least 2 skipped", res.PartsSent, res.PartsSkipped)
	}
	got, err := os.ReadFile(filepath.Join(s.TraceDir("changed"), "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("kernel after the resumed upload: %v, %d bytes, equal to the changed source %v", err, len(got), bytes.Equal(got, big))
	}
}
