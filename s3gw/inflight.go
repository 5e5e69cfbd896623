package s3gw

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/s3response"
)

// counting is the backend with each request that writes an object counted
// while it runs: a PUT, a multipart part (uploaded or copied), a
// multipart completion, a copy. The body of a PUT or a part streams
// through the call, so a slow upload counts for as long as it lasts.
type counting struct {
	keyGuard
	n *atomic.Int64
}

func (c counting) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return c.keyGuard.PutObject(ctx, in)
}

func (c counting) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return c.keyGuard.UploadPart(ctx, in)
}

func (c counting) UploadPartCopy(ctx context.Context, in *s3.UploadPartCopyInput) (s3response.CopyPartResult, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return c.keyGuard.UploadPartCopy(ctx, in)
}

func (c counting) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return c.keyGuard.CompleteMultipartUpload(ctx, in)
}

func (c counting) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return c.keyGuard.CopyObject(ctx, in)
}

// UploadsInFlight is how many requests writing an object are under way.
func (g *Gateway) UploadsInFlight() int64 { return g.uploads.Load() }
