package s3gw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// CompleteMultipartUpload joins the parts as the backend does, one after
// another into the object's temporary file, but moves each part rather
// than copying it: once a part is in the object its file is removed. The
// backend's own join keeps every part until the end, so the disk had to
// hold the upload twice, and a 2 GiB upload wrote 4 GiB into the page
// cache, each byte into memory the kernel had not used yet, which cost as
// much as the copy itself. A removed part's pages, never written to disk,
// are freed when the backend closes it and are what the next part is
// copied into. A full disk needs room for the upload and its largest part.
//
// A completion that fails after the first part moved cannot be retried:
// the backend removes the upload (the move is not idempotent), the request
// fails, and the client has to send the file again; asking again gets
// NoSuchUpload. One that fails on the first part (a disk too full for it,
// say) leaves the upload as it was, to be completed later. A server killed
// half way publishes nothing, as before, but the parts it moved are gone.
func (g keyGuard) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	// Not cancelled with the request's context: the gateway's (fasthttp's
	// RequestCtx) Done reads its server's shutdown channel unguarded, and
	// the goroutine context.WithCancel starts to watch it raced with a
	// shutdown (the race detector caught it in
	// TestRestartReleasesAnUnfinishedCompletion). That Done closes only at
	// shutdown, never when a client goes, so all this gives up is stopping
	// a join half way when the server stops, which a restart handles.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	j := joiner{cancel: cancel}
	res, version, err := g.Posix.CompleteMultipartUploadWithCopy(ctx, in, j.move)
	if j.err != nil {
		if err == nil {
			// Cannot happen while the backend checks the context after
			// the join (TestCompleteNeedsRoomForOneMorePart would fail).
			return res, version, fmt.Errorf("s3gw: the object was published although joining its parts failed: %w", j.err)
		}
		return res, version, j.s3Error()
	}
	return res, version, err
}

// joiner moves the parts of one completion. The backend (versitygw 1.8.0)
// drops the error a copy function returns once its own fallback copy has
// run, and would publish the object short, so a failed move does not
// return its error: it records it, skips the parts after it, cancels the
// completion's context, which the backend checks right after the join
// and before it publishes anything, and closes the object's file, which
// the backend needs for publishing.
type joiner struct {
	cancel context.CancelFunc
	err    error
}

// move appends part to obj and removes part's file (by the name the
// backend opened it with, relative to the storage root, the working
// directory). It reports whether part is still there.
func (j *joiner) move(part, obj *os.File) (intact bool, _ error) {
	if j.err != nil {
		return true, nil
	}
	if err := appendFile(obj, part); err != nil {
		j.err = err
		j.cancel()
		obj.Close()
		return true, nil
	}
	return os.Remove(part.Name()) != nil, nil
}

// appendFile copies src, from its start, to the end of dst, and checks that
// all of it arrived.
func appendFile(dst, src *os.File) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	// Both are files: io.Copy uses copy_file_range, a copy in the kernel.
	n, err := io.Copy(dst, src)
	if err == nil && n != fi.Size() {
		err = fmt.Errorf("%d of its %d bytes copied", n, fi.Size())
	}
	if err != nil {
		return fmt.Errorf("join part %s: %w", src.Name(), err)
	}
	return nil
}

// s3Error is the failed join's error as S3 says it.
func (j *joiner) s3Error() error {
	switch {
	case errors.Is(j.err, syscall.ENOSPC):
		return s3err.GetAPIError(s3err.ErrNoSpaceLeftOnDevice)
	case errors.Is(j.err, syscall.EDQUOT):
		return s3err.GetAPIError(s3err.ErrQuotaExceeded)
	}
	return j.err
}
