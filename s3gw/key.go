package s3gw

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// maxNameLen is the longest file name the file systems Cascade runs on
// take; a longer key component could not become a file.
const maxNameLen = 255

// reservedNames are the gateway's own files in a bucket (posix backend):
// its staging directory, its lock directory (outside the buckets, but
// refused as well, so no bucket ever holds the name), and, in any
// directory, the names it links a replacing object's file to before it
// renames it over the old one (".<name>.sgwtmp.<time>").
var reservedNames = []string{posix.MetaTmpDir, ".vgwlocks"}

const reservedInfix = ".sgwtmp."

// CheckKey reports why an object key cannot be stored as a file the
// scanner follows, or nil. The gateway already refuses keys whose ".."
// would leave the bucket; on top of that a key may not have an empty
// component before its end ("/abs", "a//b": two keys would name one
// file), a "." or ".." component, a control character, a component longer
// than a file name can be, or a component the gateway keeps for its own
// files (reservedNames). Other dotfiles (.DS_Store, .git/...) are stored
// as they are, so a folder that holds them uploads whole; the scanner
// skips them. A trailing slash, S3's directory marker, is allowed.
func CheckKey(key string) error {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		switch {
		case p == "" && i == len(parts)-1 && i > 0:
		case p == "":
			return invalidKey(key, "has an empty path component (a leading or doubled slash)")
		case p == "." || p == "..":
			return invalidKey(key, fmt.Sprintf("has the component %q, which a file path cannot hold", p))
		case reserved(p):
			return invalidKey(key, fmt.Sprintf("has the component %q, a name the S3 endpoint keeps for its own files", p))
		case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return invalidKey(key, "has a control character")
		case len(p) > maxNameLen:
			return s3err.GetAPIError(s3err.ErrKeyTooLong)
		}
	}
	return nil
}

// reserved reports whether a key component is one of the gateway's own
// names (reservedNames).
func reserved(p string) bool {
	return slices.Contains(reservedNames, p) || strings.HasPrefix(p, ".") && strings.Contains(p, reservedInfix)
}

// CheckTraceKey reports why an object key of the watched bucket cannot be
// a file of a trace, or nil: the trace folder it writes into (the
// component after prefix, see TraceFolder) may not start with a dot, as
// the scanner would never see the trace, nor be longer than a trace id
// (cascade.MaxTraceIDLen), which the server could never process.
func CheckTraceKey(prefix, key string) error {
	folder, ok := TraceFolder(prefix, key)
	if !ok {
		return nil
	}
	if strings.HasPrefix(folder, ".") {
		return invalidKey(key, fmt.Sprintf("has the trace folder %q, which starts with a dot: Cascade skips dot folders, so the trace would never appear", folder))
	}
	if why := cascade.TraceIDTooLong(folder); why != "" {
		return s3err.APIError{
			Code:           "InvalidArgument",
			Description:    fmt.Sprintf("Object key %.60q… has a trace folder name that %s; upload the trace under a shorter name.", key, why),
			HTTPStatusCode: http.StatusBadRequest,
		}
	}
	return nil
}

// TraceFolder returns the trace folder a key of the watched bucket is in:
// the component after prefix ("traces", or "a/b"; "" is the bucket's top),
// when a further component (or S3's directory marker, a trailing slash)
// follows it. A key outside the prefix, or a file right under it, is in
// no trace folder.
func TraceFolder(prefix, key string) (string, bool) {
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	rest := key
	if prefix != "" {
		var ok bool
		if rest, ok = strings.CutPrefix(key, prefix+"/"); !ok {
			return "", false
		}
	}
	folder, _, ok := strings.Cut(rest, "/")
	if !ok || folder == "" {
		return "", false
	}
	return folder, true
}

func invalidKey(key, why string) error {
	return s3err.APIError{
		Code:           "InvalidArgument",
		Description:    fmt.Sprintf("Object key %q %s.", key, why),
		HTTPStatusCode: http.StatusBadRequest,
	}
}

// keyGuard is the posix backend with every write of a new key checked by
// CheckKey first, and by CheckTraceKey in the watched bucket, and READ
// granted to the read-only access key, if any (see accounts).
type keyGuard struct {
	*posix.Posix
	readOnly string
	// bucket and prefix: where the trace folders are (Config).
	bucket, prefix string
}

func (g keyGuard) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	if err := g.checkKey(in.Bucket, in.Key); err != nil {
		return s3response.PutObjectOutput{}, err
	}
	return g.Posix.PutObject(ctx, putCRC64(in))
}

func (g keyGuard) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	if err := g.checkKey(in.Bucket, in.Key); err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	return g.Posix.CreateMultipartUpload(ctx, in)
}

func (g keyGuard) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	if err := g.checkKey(in.Bucket, in.Key); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	return g.Posix.CopyObject(ctx, in)
}

func (g keyGuard) checkKey(bucket, key *string) error {
	if key == nil {
		return nil
	}
	if err := CheckKey(*key); err != nil {
		return err
	}
	if bucket == nil || *bucket != g.bucket {
		return nil
	}
	return CheckTraceKey(g.prefix, *key)
}
