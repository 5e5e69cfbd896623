package s3gw

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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
// exactly when its only checksum is a CRC64NVME header: not with another
// checksum, none, a trailer, or (a PUT) an empty body.
func TestCRC64BodyOnlyForACRC64Header(t *testing.T) {
	data := []byte("kernel trace line\n")
	sum := crc64Of(data)
	body := func() io.Reader { return bytes.NewReader(data) }
	for _, tc := range []struct {
		name string
		in   s3.UploadPartInput
		want bool
	}{
		{"crc64nvme header", s3.UploadPartInput{Body: body(), ChecksumCRC64NVME: &sum}, true},
		{"no checksum", s3.UploadPartInput{Body: body()}, false},
		{"crc32c header", s3.UploadPartInput{Body: body(), ChecksumCRC32C: aws.String("AAAAAA==")}, false},
		{"crc64nvme and sha256 headers", s3.UploadPartInput{Body: body(), ChecksumCRC64NVME: &sum, ChecksumSHA256: aws.String("x")}, false},
		{"trailer", s3.UploadPartInput{Body: trailer{body()}, ChecksumCRC64NVME: &sum}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := crc64Only(tc.in.Body, tc.in.ChecksumCRC64NVME, tc.in.ChecksumCRC32, tc.in.ChecksumCRC32C, tc.in.ChecksumSHA1, tc.in.ChecksumSHA256)
			if (b != nil) != tc.want {
				t.Fatalf("crc64Only: %v, want a checksum reader: %v", b, tc.want)
			}
			put := putCRC64(s3response.PutObjectInput{Body: tc.in.Body, ContentLength: aws.Int64(int64(len(data))),
				ChecksumCRC64NVME: tc.in.ChecksumCRC64NVME, ChecksumCRC32C: tc.in.ChecksumCRC32C, ChecksumSHA256: tc.in.ChecksumSHA256})
			if _, ok := put.Body.(*crc64Body); ok != tc.want || (ok && put.ChecksumCRC64NVME != nil) {
				t.Fatalf("putCRC64: body %T, header %v; want a crc64Body: %v, and then no header", put.Body, put.ChecksumCRC64NVME, tc.want)
			}
		})
	}
	empty := putCRC64(s3response.PutObjectInput{Body: bytes.NewReader(nil), ContentLength: aws.Int64(0), ChecksumCRC64NVME: &sum})
	if _, ok := empty.Body.(*crc64Body); ok {
		t.Fatal("putCRC64 wrapped an empty body, whose checksum the backend takes before reading it")
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
