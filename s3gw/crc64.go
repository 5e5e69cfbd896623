package s3gw

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/crc64nvme"
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/s3api/middlewares"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// The gateway computes the CRC64NVME of every object and part it stores
// (the ETag, see posixOpts) with Go's table-driven hash/crc64, which was a
// sixth of the server's CPU in a 2 GiB upload. When that is the only
// checksum the backend would compute of a body, the body is handed to it
// as a checksum reader instead (the form the gateway gives a body whose
// checksum comes in a trailer): crc64Body computes the CRC64NVME with the
// CPU's carry-less multiply instructions (github.com/minio/crc64nvme,
// several times faster) and the backend takes the checksum from it rather
// than hashing the body again. That is the case for a request whose only
// checksum is an x-amz-checksum-crc64nvme header, as `cascade upload`
// sends (crc64Body refuses a body that does not match it with S3's
// BadDigest), and for one with no checksum at all, as the AWS CLI sends
// with request_checksum_calculation = when_required, when it is a PUT or
// a part of a multipart upload created without a checksum algorithm or
// with CRC64NVME. A request with another checksum or a trailer, or a part
// of an upload with another algorithm (whose checksum the backend
// computes), is left as it is.

// crc64Body is a body whose CRC64NVME is checked against want at its end.
type crc64Body struct {
	r    io.Reader
	crc  uint64
	want string // base64 of the big-endian value, as the header carries it; "" checks nothing
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
		if b.want != "" && b.Checksum() != b.want {
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
// is a CRC64NVME in a header (checked against it), or when it has none
// and none is allowed (checking nothing), and the body is not a
// trailer-checked one already; otherwise it returns nil.
func crc64Only(body io.Reader, noneToo bool, crc64 *string, others ...*string) *crc64Body {
	if body == nil || (crc64 == nil && !noneToo) {
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
	b := &crc64Body{r: body}
	if crc64 != nil {
		b.want = *crc64
	}
	return b
}

func (g keyGuard) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	if b := crc64Only(in.Body, uploadCRC64OrNone(in.Bucket, in.Key, in.UploadId), in.ChecksumCRC64NVME, in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128); b != nil {
		c := *in
		c.Body, c.ChecksumCRC64NVME = b, nil
		in = &c
	}
	return g.Posix.UploadPart(ctx, in)
}

// uploadCRC64OrNone reports whether the multipart upload was created
// without a checksum algorithm or with CRC64NVME: then the backend
// computes a CRC64NVME of a part sent without a checksum, and no other.
// It reads the algorithm where the backend keeps it, an extended attribute
// of the upload's staging directory (paths are relative to the storage
// root, the working directory); when in doubt it says no.
func uploadCRC64OrNone(bucket, key, uploadID *string) bool {
	if bucket == nil || key == nil || uploadID == nil {
		return false
	}
	dir := filepath.Join(posix.MetaTmpMultipartDir, fmt.Sprintf("%x", sha256.Sum256([]byte(*key))), *uploadID)
	if _, err := os.Stat(filepath.Join(*bucket, dir)); err != nil {
		return false
	}
	data, err := (meta.XattrMeta{}).RetrieveAttribute(nil, *bucket, dir, "checksums")
	if errors.Is(err, meta.ErrNoSuchKey) {
		return true
	}
	var sums s3response.Checksum
	if err != nil || json.Unmarshal(data, &sums) != nil {
		return false
	}
	return sums.Algorithm == "" || sums.Algorithm == types.ChecksumAlgorithmCrc64nvme
}

// putCRC64 is PutObject's part of the above. An empty body is left as it
// is (the backend takes its checksum before reading it).
func putCRC64(in s3response.PutObjectInput) s3response.PutObjectInput {
	if in.ContentLength == nil || *in.ContentLength <= 0 {
		return in
	}
	// A checksum algorithm named without a value is one the backend
	// computes (CRC64NVME when none is named).
	noneToo := in.ChecksumAlgorithm == "" || in.ChecksumAlgorithm == types.ChecksumAlgorithmCrc64nvme
	if b := crc64Only(in.Body, noneToo, in.ChecksumCRC64NVME, in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128); b != nil {
		in.Body, in.ChecksumCRC64NVME = b, nil
	}
	return in
}
