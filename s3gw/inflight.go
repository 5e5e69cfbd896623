package s3gw

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/s3response"
)

// counting is the backend with each request that writes an object counted
// while it runs: a PUT, a multipart part (uploaded or copied), a
// multipart completion, a copy. The body of a PUT or a part streams
// through the call, so a slow upload counts for as long as it lasts.
type counting struct {
	keyGuard
	a *activity
}

func (c counting) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	return c.keyGuard.PutObject(ctx, in)
}

func (c counting) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	return c.keyGuard.UploadPart(ctx, in)
}

func (c counting) UploadPartCopy(ctx context.Context, in *s3.UploadPartCopyInput) (s3response.CopyPartResult, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	return c.keyGuard.UploadPartCopy(ctx, in)
}

func (c counting) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	out, etag, err := c.keyGuard.CompleteMultipartUpload(ctx, in)
	if err == nil {
		c.a.opened(in.Bucket, in.Key, -1)
	}
	return out, etag, err
}

func (c counting) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	return c.keyGuard.CopyObject(ctx, in)
}

func (c counting) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	out, err := c.keyGuard.CreateMultipartUpload(ctx, in)
	if err == nil {
		c.a.opened(in.Bucket, in.Key, 1)
	}
	return out, err
}

func (c counting) AbortMultipartUpload(ctx context.Context, in *s3.AbortMultipartUploadInput) error {
	err := c.keyGuard.AbortMultipartUpload(ctx, in)
	if err == nil {
		c.a.opened(in.Bucket, in.Key, -1)
	}
	return err
}

// activity is the writes under way, in all (n) and by object, and the
// multipart uploads open by object: what Writing reads.
type activity struct {
	n    atomic.Int64
	mu   sync.Mutex
	keys map[string]*writes // by bucket/key
}

// writes is what is under way of one object.
type writes struct {
	running, open int
	last          time.Time // when a write of it started or ended
}

// openIdle is how long a multipart upload open without a part written
// still counts as under way: one a client left (it crashed, and never
// aborted it) stops holding its trace back.
const openIdle = 10 * time.Minute

func objectKey(bucket, key *string) string { return aws.ToString(bucket) + "/" + aws.ToString(key) }

// at returns the object's writes, made if new; a.mu is held.
func (a *activity) at(k string) *writes {
	if a.keys == nil {
		a.keys = map[string]*writes{}
	}
	w := a.keys[k]
	if w == nil {
		w = &writes{}
		a.keys[k] = w
	}
	return w
}

// begin counts a write of the object, until the func it returns is called.
func (a *activity) begin(bucket, key *string) func() {
	a.n.Add(1)
	k := objectKey(bucket, key)
	a.mu.Lock()
	w := a.at(k)
	w.running++
	w.last = time.Now()
	a.mu.Unlock()
	return func() {
		a.n.Add(-1)
		a.mu.Lock()
		defer a.mu.Unlock()
		w.running--
		w.last = time.Now()
		if w.running == 0 && w.open <= 0 {
			delete(a.keys, k)
		}
	}
}

// opened counts a multipart upload of the object opened (+1), or
// aborted or completed (-1).
func (a *activity) opened(bucket, key *string, d int) {
	k := objectKey(bucket, key)
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.at(k)
	w.open += d
	w.last = time.Now()
	if w.running == 0 && w.open <= 0 {
		delete(a.keys, k)
	}
}

// UploadsInFlight is how many requests writing an object are under way.
func (g *Gateway) UploadsInFlight() int64 { return g.uploads.n.Load() }

// Writing reports whether an object of bucket whose key starts with
// prefix is being written (a PUT, a part, a copy or a completion under
// way), or has a multipart upload open that a part was written to within
// the last ten minutes. Between two parts of a large kernel trace no
// request runs and nothing under the prefix changes on disk (the parts
// are kept apart until the upload completes): a trace uploaded without a
// files list looked complete there.
func (g *Gateway) Writing(bucket, prefix string) bool {
	return g.uploads.writing(bucket, prefix, time.Now())
}

func (a *activity) writing(bucket, prefix string, now time.Time) bool {
	want := bucket + "/" + prefix
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, w := range a.keys {
		if strings.HasPrefix(k, want) && (w.running > 0 || w.open > 0 && now.Sub(w.last) < openIdle) {
			return true
		}
	}
	return false
}
