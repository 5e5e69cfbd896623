package upload

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"hash/crc64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
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
