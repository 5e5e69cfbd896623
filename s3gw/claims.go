package s3gw

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/versity/versitygw/backend/posix"
)

// inProgress ends the name the backend gives a multipart upload's
// directory while a CompleteMultipartUpload joins it:
// <upload id>.<claim token>.inprogress, renamed from <upload id>.
const inProgress = ".inprogress"

// releaseClaims gives back the multipart uploads that a server killed
// during CompleteMultipartUpload left claimed, in every bucket under root.
// The backend takes such a claim by renaming the upload's directory and
// answers a later completion of a claimed upload with success, as if
// another request were still joining it, so an upload completed while the
// server died would be reported done with no object ever appearing; it
// also leaves claimed uploads out of ListMultipartUploads, so they could
// not be resumed either. Released, the upload is listed again with the
// parts it still has (the join moves parts into the object and removes
// them, see join.go): completing it fails with InvalidPart until the
// missing parts are sent again, which `cascade upload` does when it
// resumes. It runs before the gateway serves, when no completion can be
// under way, and logs each upload it releases or cannot.
func releaseClaims(root string, log *slog.Logger) {
	claims, _ := filepath.Glob(filepath.Join(root, "*", posix.MetaTmpMultipartDir, "*", "*"+inProgress))
	for _, claimed := range claims {
		id, _, ok := strings.Cut(filepath.Base(claimed), ".")
		if !ok || id == "" {
			continue
		}
		upload := filepath.Join(filepath.Dir(claimed), id)
		err := os.Rename(claimed, upload)
		if err == nil {
			parts, _ := os.ReadDir(upload)
			log.Warn("a multipart upload was being completed when the server stopped; it is listed again, without the parts it had joined, which must be sent again",
				"upload", id, "dir", upload, "parts", len(parts))
			continue
		}
		log.Error("a multipart upload left claimed by a completion the server did not finish could not be released", "dir", claimed, "err", err)
	}
}
