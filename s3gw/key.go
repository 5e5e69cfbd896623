package s3gw

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// maxNameLen is the longest file name the file systems Cascade runs on
// take; a longer key component could not become a file.
const maxNameLen = 255

// CheckKey reports why an object key cannot be stored as a file the
// scanner follows, or nil. The gateway already refuses keys whose ".."
// would leave the bucket; on top of that a key may not have a component
// that starts with a dot (the scanner skips dotfiles, and the gateway keeps
// its own staging in .sgwtmp), an empty component before its end ("/abs",
// "a//b": two keys would name one file), a control character, or a
// component longer than a file name can be. A trailing slash, S3's
// directory marker, is allowed.
func CheckKey(key string) error {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		switch {
		case p == "" && i == len(parts)-1 && i > 0:
		case p == "":
			return invalidKey(key, "has an empty path component (a leading or doubled slash)")
		case strings.HasPrefix(p, "."):
			return invalidKey(key, fmt.Sprintf("has the component %q, which starts with a dot: Cascade skips dotfiles", p))
		case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return invalidKey(key, "has a control character")
		case len(p) > maxNameLen:
			return s3err.GetAPIError(s3err.ErrKeyTooLong)
		}
	}
	return nil
}

func invalidKey(key, why string) error {
	return s3err.APIError{
		Code:           "InvalidArgument",
		Description:    fmt.Sprintf("Object key %q %s.", key, why),
		HTTPStatusCode: http.StatusBadRequest,
	}
}

// keyGuard is the posix backend with every write of a new key checked by
// CheckKey first, and READ granted to the read-only access key, if any
// (see accounts).
type keyGuard struct {
	*posix.Posix
	readOnly string
}

func (g keyGuard) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	if err := checkKeyPtr(in.Key); err != nil {
		return s3response.PutObjectOutput{}, err
	}
	return g.Posix.PutObject(ctx, putCRC64(in))
}

func (g keyGuard) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	if err := checkKeyPtr(in.Key); err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	return g.Posix.CreateMultipartUpload(ctx, in)
}

func (g keyGuard) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	if err := checkKeyPtr(in.Key); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	return g.Posix.CopyObject(ctx, in)
}

func checkKeyPtr(key *string) error {
	if key == nil {
		return nil
	}
	return CheckKey(*key)
}
