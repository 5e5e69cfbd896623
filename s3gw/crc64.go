package s3gw

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/crc64nvme"
	"github.com/versity/versitygw/s3api/middlewares"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// The gateway computes the CRC64NVME of every object and part it stores
// (the ETag, see posixOpts) with Go's table-driven hash/crc64, which was a
// sixth of the server's CPU in a 2 GiB upload. When a request names the
// body's CRC64NVME in its x-amz-checksum-crc64nvme header, as `cascade
// upload` does, the body is handed to the backend as a checksum reader
// (the form the gateway gives a body whose checksum comes in a trailer):
// crc64Body computes the CRC64NVME with the CPU's carry-less multiply
// instructions (github.com/minio/crc64nvme, several times faster), refuses
// a body that does not match the header with S3's BadDigest, and the
// backend takes its checksum from it instead of hashing the body again. A
// request with another checksum, none, or a trailer is left as it is.

// crc64Body is a body whose CRC64NVME is checked against want at its end.
type crc64Body struct {
	r    io.Reader
	crc  uint64
	want string // base64 of the big-endian value, as the header carries it
	done bool
}

var _ middlewares.ChecksumReader = (*crc64Body)(nil)

func (b *crc64Body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.crc = crc64nvme.Update(b.crc, p[:n])
	// A body cut short is a body that does not match, as the gateway's
	// own checksum reader treats it.
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	if err == io.EOF && !b.done {
		b.done = true
		if b.Checksum() != b.want {
			return n, s3err.GetChecksumBadDigestErr(types.ChecksumAlgorithmCrc64nvme)
		}
	}
	return n, err
}

// Algorithm is the name the backend knows the checksum by.
func (b *crc64Body) Algorithm() string { return "crc64nvme" }

// Checksum is the CRC64NVME of what was read, as S3 writes it.
func (b *crc64Body) Checksum() string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, b.crc))
}

// crc64Only returns a crc64Body for body when the request's only checksum
// is a CRC64NVME in a header and the body is not a trailer-checked one
// already; otherwise it returns nil.
func crc64Only(body io.Reader, crc64 *string, others ...*string) *crc64Body {
	if body == nil || crc64 == nil {
		return nil
	}
	for _, o := range others {
		if o != nil {
			return nil
		}
	}
	if cr, ok := body.(middlewares.ChecksumReader); ok && cr.Algorithm() != "" {
		return nil
	}
	return &crc64Body{r: body, want: *crc64}
}

func (g keyGuard) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	if b := crc64Only(in.Body, in.ChecksumCRC64NVME, in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128); b != nil {
		c := *in
		c.Body, c.ChecksumCRC64NVME = b, nil
		in = &c
	}
	return g.Posix.UploadPart(ctx, in)
}

// putCRC64 is PutObject's part of the above. An empty body keeps the
// backend's own check (it takes the checksum before reading the body).
func putCRC64(in s3response.PutObjectInput) s3response.PutObjectInput {
	if in.ContentLength == nil || *in.ContentLength <= 0 {
		return in
	}
	if b := crc64Only(in.Body, in.ChecksumCRC64NVME, in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128); b != nil {
		in.Body, in.ChecksumCRC64NVME = b, nil
	}
	return in
}
