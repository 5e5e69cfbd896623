package s3gw

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/s3response"
)

// A multipart upload keeps its parts in the bucket's .sgwtmp directory
// until it is completed or aborted. One a client left (it crashed, or was
// killed, and never aborted) keeps them for ever: a kernel trace's parts
// are gigabytes, which no scan sees and nothing else frees. The gateway
// aborts, at start and then hourly, the uploads nothing was written to
// (no part, no start) for longer than Config.MultipartExpiry, as S3's
// lifecycle rule AbortIncompleteMultipartUpload does. An upload resumed
// within that time (`cascade upload` resumes one, part by part) keeps
// its parts.

// DefaultMultipartExpiry is Config.MultipartExpiry's default: a week,
// time to resume an upload interrupted on a Friday.
const DefaultMultipartExpiry = 7 * 24 * time.Hour

// expireEvery is how often the uploads are looked at after the start, or
// half the expiry when that is shorter (but a second at least).
const expireEvery = time.Hour

// uploadsBackend is what expiry asks of the backend: counting, so that an
// abort is counted as a client's would be.
type uploadsBackend interface {
	ListMultipartUploads(context.Context, *s3.ListMultipartUploadsInput) (s3response.ListMultipartUploadsResult, error)
	ListParts(context.Context, *s3.ListPartsInput) (s3response.ListPartsResult, error)
	AbortMultipartUpload(context.Context, *s3.AbortMultipartUploadInput) error
}

// expireLoop aborts the bucket's expired multipart uploads now and every
// expireEvery until ctx ends; after <= 0 turns it off.
func expireLoop(ctx context.Context, be uploadsBackend, a *activity, bucket string, after time.Duration, log *slog.Logger) {
	if after <= 0 {
		return
	}
	t := time.NewTicker(min(expireEvery, max(after/2, time.Second)))
	defer t.Stop()
	for {
		n, parts, bytes, err := expireUploads(ctx, be, a, bucket, time.Now(), after)
		if n > 0 {
			log.Info("aborted multipart uploads left unfinished", "uploads", n, "parts", parts, "bytes", bytes, "idle_for_more_than", after.String())
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("expiring multipart uploads", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// expireUploads aborts the multipart uploads of bucket nothing was
// written to since now-after, and reports how many, with their parts and
// bytes. An upload whose object is being written is left alone.
func expireUploads(ctx context.Context, be uploadsBackend, a *activity, bucket string, now time.Time, after time.Duration) (n, parts int, bytes int64, err error) {
	err = eachUpload(ctx, be, bucket, func(u s3response.Upload, last time.Time, stored map[int32]int64) error {
		if now.Sub(last) <= after || a.running(bucket, u.Key) {
			return nil
		}
		if err := be.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: aws.String(u.Key), UploadId: aws.String(u.UploadID)}); err != nil {
			return err
		}
		n, parts = n+1, parts+len(stored)
		for _, size := range stored {
			bytes += size
		}
		return nil
	})
	return n, parts, bytes, err
}

// eachUpload calls fn with each multipart upload of bucket, when it was
// last written to (lastWritten), its parts and their bytes, until fn
// fails.
func eachUpload(ctx context.Context, be uploadsBackend, bucket string, fn func(u s3response.Upload, last time.Time, parts map[int32]int64) error) error {
	var keyMarker, idMarker string
	for {
		in := &s3.ListMultipartUploadsInput{Bucket: &bucket, MaxUploads: aws.Int32(1000)} // the backend takes the API's default as given
		if keyMarker != "" {
			in.KeyMarker, in.UploadIdMarker = aws.String(keyMarker), aws.String(idMarker)
		}
		res, err := be.ListMultipartUploads(ctx, in)
		if err != nil {
			return err
		}
		for _, u := range res.Uploads {
			last, parts, err := lastWritten(ctx, be, bucket, u)
			if err != nil {
				return err
			}
			if err := fn(u, last, parts); err != nil {
				return err
			}
		}
		if !res.IsTruncated || res.NextKeyMarker == "" {
			return nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

// lastWritten is when the upload u was last written to (its start or its
// newest part), with its parts' bytes by part number.
func lastWritten(ctx context.Context, be uploadsBackend, bucket string, u s3response.Upload) (last time.Time, parts map[int32]int64, err error) {
	last, parts = u.Initiated, map[int32]int64{}
	var marker *string
	for {
		res, err := be.ListParts(ctx, &s3.ListPartsInput{Bucket: &bucket, Key: aws.String(u.Key), UploadId: aws.String(u.UploadID), PartNumberMarker: marker, MaxParts: aws.Int32(1000)})
		if err != nil {
			return last, parts, err
		}
		for _, p := range res.Parts {
			if p.LastModified.After(last) {
				last = p.LastModified
			}
			parts[int32(p.PartNumber)] = p.Size
		}
		if !res.IsTruncated || res.NextPartNumberMarker == 0 {
			return last, parts, nil
		}
		marker = aws.String(strconv.Itoa(res.NextPartNumberMarker))
	}
}

// restoreOpen counts the bucket's multipart uploads an earlier server
// left open as open (Gateway.Writing), each as last written when its
// newest part was: a restart forgot them, and a trace uploaded without
// a files list, one kernel's parts still arriving, was taken for
// complete and failed on the kernel it lacked.
func restoreOpen(ctx context.Context, be uploadsBackend, a *activity, bucket string) error {
	return eachUpload(ctx, be, bucket, func(u s3response.Upload, last time.Time, parts map[int32]int64) error {
		a.restore(bucket, u.Key, u.UploadID, last, parts)
		return nil
	})
}
