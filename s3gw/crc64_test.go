package s3gw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/crc64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/versity/versitygw/s3api/middlewares"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

func crc64Of(b []byte) string {
	sum := crc64.Checksum(b, crc64.MakeTable(0x9a6c9329ac4bc9b5))
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, sum))
}

// trailer is a body whose checksum comes in a trailer, as the gateway
// hands one to the backend.
type trailer struct{ io.Reader }

func (trailer) Algorithm() string { return "crc32" }
func (trailer) Checksum() string  { return "AAAAAA==" }

// TestCRC64BodyOnlyForACRC64Header: a part or a PUT is handed to the
// backend as a checksum reader (so the backend does not hash it again)
// when its only checksum is a CRC64NVME header, or when it has none and
// the backend would compute a CRC64NVME (a PUT, or a part of an upload
// with no algorithm or CRC64NVME: noneToo); not with another checksum, a
// trailer, or (a PUT) an empty body or a named algorithm.
func TestCRC64BodyOnlyForACRC64Header(t *testing.T) {
	data := []byte("kernel trace line\n")
	sum := crc64Of(data)
	body := func() io.Reader { return bytes.NewReader(data) }
	for _, tc := range []struct {
		name               string
		in                 s3.UploadPartInput
		wantPart, wantNone bool
	}{
		{"crc64nvme header", s3.UploadPartInput{Body: body(), ChecksumCRC64NVME: &sum}, true, true},
		{"no checksum", s3.UploadPartInput{Body: body()}, false, true},
		{"crc32c header", s3.UploadPartInput{Body: body(), ChecksumCRC32C: aws.String("AAAAAA==")}, false, false},
		{"crc64nvme and sha256 headers", s3.UploadPartInput{Body: body(), ChecksumCRC64NVME: &sum, ChecksumSHA256: aws.String("x")}, false, false},
		{"trailer", s3.UploadPartInput{Body: trailer{body()}, ChecksumCRC64NVME: &sum}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, noneToo := range []bool{false, true} {
				want := tc.wantPart || (noneToo && tc.wantNone)
				b := crc64Only(tc.in.Body, noneToo, tc.in.ChecksumCRC64NVME, tc.in.ChecksumCRC32, tc.in.ChecksumCRC32C, tc.in.ChecksumSHA1, tc.in.ChecksumSHA256)
				if (b != nil) != want {
					t.Fatalf("crc64Only(noneToo %v): %v, want a checksum reader: %v", noneToo, b, want)
				}
			}
			put := putCRC64(s3response.PutObjectInput{Body: tc.in.Body, ContentLength: aws.Int64(int64(len(data))),
				ChecksumCRC64NVME: tc.in.ChecksumCRC64NVME, ChecksumCRC32C: tc.in.ChecksumCRC32C, ChecksumSHA256: tc.in.ChecksumSHA256})
			if _, ok := put.Body.(*crc64Body); ok != tc.wantNone || (ok && put.ChecksumCRC64NVME != nil) {
				t.Fatalf("putCRC64: body %T, header %v; want a crc64Body: %v, and then no header", put.Body, put.ChecksumCRC64NVME, tc.wantNone)
			}
		})
	}
	for _, in := range []s3response.PutObjectInput{
		{Body: bytes.NewReader(nil), ContentLength: aws.Int64(0), ChecksumCRC64NVME: &sum},
		{Body: body(), ContentLength: aws.Int64(int64(len(data))), ChecksumAlgorithm: types.ChecksumAlgorithmSha256},
	} {
		if out := putCRC64(in); out.Body != in.Body {
			t.Errorf("putCRC64 wrapped the body of a PUT of %d bytes with algorithm %q", *in.ContentLength, in.ChecksumAlgorithm)
		}
	}
}

// TestUploadCRC64OrNone reads the checksum algorithm of real multipart
// uploads as the gateway keeps them: a part without a checksum may skip
// the backend's hashing only in an upload with no algorithm or CRC64NVME.
// A part sent without a checksum to an upload with another algorithm is
// still stored with that algorithm's checksum, computed by the backend.
func TestUploadCRC64OrNone(t *testing.T) {
	testkit.SkipShort(t, "starts the S3 gateway")
	keys := Keys{AccessKey: "TESTACCESSKEY", SecretKey: "test-secret-key-0123456789"}
	g, err := Start(context.Background(), Config{Root: t.TempDir(), Bucket: "cascade", Addr: "127.0.0.1:0", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c := s3.New(s3.Options{BaseEndpoint: aws.String(g.URL), Region: Region, UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider(keys.AccessKey, keys.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired})
	ctx := context.Background()
	part := bytes.Repeat([]byte("kernel trace line\n"), 1000)
	for _, tc := range []struct {
		algo types.ChecksumAlgorithm
		want bool
	}{{"", true}, {types.ChecksumAlgorithmCrc64nvme, true}, {types.ChecksumAlgorithmCrc32, false}, {types.ChecksumAlgorithmSha256, false}} {
		key := "traces/algo/" + strings.ToLower(string(tc.algo)) + "x.trace"
		in := &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: &key, ChecksumAlgorithm: tc.algo}
		if tc.algo == types.ChecksumAlgorithmCrc32 || tc.algo == types.ChecksumAlgorithmCrc64nvme {
			in.ChecksumType = types.ChecksumTypeFullObject
		}
		mp, err := c.CreateMultipartUpload(ctx, in)
		if err != nil {
			t.Fatalf("%q: %v", tc.algo, err)
		}
		if got := uploadCRC64OrNone(aws.String("cascade"), &key, mp.UploadId); got != tc.want {
			t.Errorf("upload with algorithm %q: uploadCRC64OrNone %v, want %v", tc.algo, got, tc.want)
		}
		if tc.algo == types.ChecksumAlgorithmSha256 {
			continue // a composite upload takes no part without its checksum
		}
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: &key, UploadId: mp.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(part)})
		if err != nil {
			t.Fatalf("part without a checksum to an upload with algorithm %q: %v", tc.algo, err)
		}
		if want := `"CRC64NVME-` + crc64Of(part) + `"`; aws.ToString(out.ETag) != want {
			t.Errorf("algorithm %q: part ETag %s, want %s", tc.algo, aws.ToString(out.ETag), want)
		}
		if tc.algo == types.ChecksumAlgorithmCrc32 {
			want := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(part)))
			if got := aws.ToString(out.ChecksumCRC32); got != want {
				t.Errorf("part of a CRC32 upload sent without a checksum: CRC32 %q, want %q", got, want)
			}
		}
	}
	if uploadCRC64OrNone(aws.String("cascade"), aws.String("traces/algo/x.trace"), aws.String("no-such-upload")) {
		t.Error("uploadCRC64OrNone says yes for an upload that does not exist")
	}
}

// TestCRC64BodyChecks: the checksum reader reports the body's CRC64NVME
// and refuses, with S3's BadDigest, a body that does not match the header
// or is cut short.
func TestCRC64BodyChecks(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // long enough for the vector code
	read := func(r io.Reader, want string) (string, error) {
		b := &crc64Body{r: r, want: want}
		var cr middlewares.ChecksumReader = b
		_, err := io.Copy(io.Discard, cr)
		return cr.Checksum(), err
	}
	got, err := read(bytes.NewReader(data), crc64Of(data))
	if err != nil || got != crc64Of(data) {
		t.Fatalf("matching body: %s, %v; want %s", got, err, crc64Of(data))
	}
	other := bytes.Clone(data)
	other[12345] ^= 1
	var ae s3err.APIError
	if _, err := read(bytes.NewReader(other), crc64Of(data)); !errors.As(err, &ae) || ae.Code != "BadDigest" {
		t.Fatalf("changed body: %v, want BadDigest", err)
	}
	cut := io.MultiReader(bytes.NewReader(data[:1000]), errReader{io.ErrUnexpectedEOF})
	if _, err := read(cut, crc64Of(data)); !errors.As(err, &ae) || ae.Code != "BadDigest" {
		t.Fatalf("body cut short: %v, want BadDigest", err)
	}
	if !strings.EqualFold((&crc64Body{}).Algorithm(), "CRC64NVME") {
		t.Fatal("algorithm name")
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
