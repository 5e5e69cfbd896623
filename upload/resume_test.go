package upload

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"hash/crc64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestPartMatches: a part is kept on resume only when every checksum the
// server lists for it is the local bytes' own, whichever ETag form the
// server uses (MD5 hex as S3 does, or the gateway's CRC64NVME), and at
// least one is known.
func TestPartMatches(t *testing.T) {
	data := []byte("a part of a kernel trace\n")
	other := []byte("a part of a kernel trace!") // same size
	md5hex := func(b []byte) string { s := md5.Sum(b); return `"` + hex.EncodeToString(s[:]) + `"` }
	crc64sum := func(b []byte) *string {
		sum := crc64.Checksum(b, crc64.MakeTable(0x9a6c9329ac4bc9b5))
		return aws.String(base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, sum)))
	}
	crc64etag := func(b []byte) string { return `"CRC64NVME-` + *crc64sum(b) + `"` }
	crc32c := func(b []byte) *string {
		sum := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
		return aws.String(base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, sum)))
	}
	for _, tc := range []struct {
		name string
		part types.Part
		want bool
	}{
		{"md5 etag", types.Part{ETag: aws.String(md5hex(data))}, true},
		{"md5 etag of other bytes", types.Part{ETag: aws.String(md5hex(other))}, false},
		{"crc64nvme etag", types.Part{ETag: aws.String(crc64etag(data))}, true},
		{"crc64nvme etag of other bytes", types.Part{ETag: aws.String(crc64etag(other))}, false},
		{"crc64nvme etag and crc32c", types.Part{ETag: aws.String(crc64etag(data)), ChecksumCRC32C: crc32c(data)}, true},
		{"crc32c of other bytes", types.Part{ETag: aws.String(crc64etag(data)), ChecksumCRC32C: crc32c(other)}, false},
		{"md5 etag and crc32c of other bytes", types.Part{ETag: aws.String(md5hex(data)), ChecksumCRC32C: crc32c(other)}, false},
		{"etag of another form", types.Part{ETag: aws.String(`"SHA256-abc"`), ChecksumCRC32C: crc32c(data)}, false},
		{"no etag", types.Part{ChecksumCRC32C: crc32c(data)}, false},
		{"crc64nvme etag and checksum", types.Part{ETag: aws.String(crc64etag(data)), ChecksumCRC64NVME: crc64sum(data)}, true},
		{"crc64nvme checksum of other bytes", types.Part{ETag: aws.String(crc64etag(data)), ChecksumCRC64NVME: crc64sum(other)}, false},
		{"md5 etag and crc64nvme checksum of other bytes", types.Part{ETag: aws.String(md5hex(data)), ChecksumCRC64NVME: crc64sum(other)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := partMatches(tc.part, bytes.NewReader(data))
			if err != nil || got != tc.want {
				t.Fatalf("partMatches(%s, %s) = %v, %v; want %v", aws.ToString(tc.part.ETag), aws.ToString(tc.part.ChecksumCRC32C), got, err, tc.want)
			}
		})
	}
}

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
	opts := Options{
		Source: src, RunName: "changed", Endpoint: s.S3.URL, Bucket: "cascade", Prefix: "traces",
		Keys: Keys(s3test.Keys), PartSize: partSize, Parallel: 2, partSent: record(cancel),
	}
	if _, err := Upload(ctx, opts); !errors.Is(err, context.Canceled) {
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
	opts.partSent = record(nil)
	res, err := Upload(context.Background(), opts)
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
