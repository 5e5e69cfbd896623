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
//
// A PUT or a completion that replaces an object with the same bytes
// counts on until that is told (same.go).
type counting struct {
	keyGuard
	a    *activity
	same *sameKeeper
}

func (c counting) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	end := c.a.begin(in.Bucket, in.Key)
	var b *body
	in.Body, b = c.a.receive(in.Bucket, in.Key, in.Body)
	p := c.same.keep(in.Bucket, in.Key)
	out, err := c.keyGuard.PutObject(ctx, in)
	b.done()
	c.same.settle(p, err, end)
	return out, err
}

func (c counting) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	part := *in
	var b *body
	part.Body, b = c.a.receive(in.Bucket, in.Key, in.Body)
	out, err := c.keyGuard.UploadPart(ctx, &part)
	if err == nil {
		c.a.stored(in.Bucket, in.Key, in.UploadId, in.PartNumber, b.read)
	}
	b.done()
	return out, err
}

func (c counting) UploadPartCopy(ctx context.Context, in *s3.UploadPartCopyInput) (s3response.CopyPartResult, error) {
	defer c.a.begin(in.Bucket, in.Key)()
	return c.keyGuard.UploadPartCopy(ctx, in)
}

func (c counting) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	end := c.a.begin(in.Bucket, in.Key)
	p := c.same.keep(in.Bucket, in.Key)
	out, etag, err := c.keyGuard.CompleteMultipartUpload(ctx, in)
	if err == nil {
		c.a.opened(in.Bucket, in.Key, -1)
		c.a.closedUpload(in.Bucket, in.Key, in.UploadId)
	}
	c.same.settle(p, err, end)
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
		c.a.closedUpload(in.Bucket, in.Key, in.UploadId)
	}
	return err
}

// activity is the writes under way, in all (n) and by object, and the
// multipart uploads open by object: what Writing reads.
type activity struct {
	n      atomic.Int64
	mu     sync.Mutex
	keys   map[string]*writes // by bucket/key; kept for endedKept once idle
	pruned time.Time          // when keys last lost its long-idle objects
}

// writes is what is under way of one object.
type writes struct {
	running, open int
	last          time.Time // when a write of it started or ended
	got           received  // what has arrived of it (arriving.go)
}

// idle reports whether nothing of the object is under way.
func (w *writes) idle() bool { return w.running == 0 && w.open <= 0 }

// endedKept is how long an object nothing is written of is remembered,
// for Writing's since: longer than any walk of a trace's files takes.
const endedKept = time.Minute

// openIdle is how long a multipart upload open without a part written
// still counts as under way: one a client left (it crashed, and never
// aborted it) stops holding its trace back.
const openIdle = 10 * time.Minute

func objectKey(bucket, key *string) string { return aws.ToString(bucket) + "/" + aws.ToString(key) }

// at returns the object's writes, made if new; a.mu is held. It drops
// the objects idle for longer than endedKept, at most once a minute.
func (a *activity) at(k string) *writes {
	if a.keys == nil {
		a.keys = map[string]*writes{}
	}
	if now := time.Now(); now.Sub(a.pruned) > endedKept {
		a.pruned = now
		for k, w := range a.keys {
			if w.idle() && now.Sub(w.last) > endedKept {
				delete(a.keys, k)
			}
		}
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
	}
}

// opened counts a multipart upload of the object opened (+1), or
// aborted or completed (-1).
func (a *activity) opened(bucket, key *string, d int) {
	k := objectKey(bucket, key)
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.at(k)
	w.open = max(w.open+d, 0) // an upload of an earlier process, aborted, was never counted
	w.last = time.Now()
}

// restore counts the object's upload id opened by an earlier server, last
// written at last, with the parts it stored.
func (a *activity) restore(bucket, key, id string, last time.Time, parts map[int32]int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := bucket + "/" + key
	for n, size := range parts {
		a.storedLocked(k, id, n, size)
	}
	w := a.at(k)
	w.open++
	if last.After(w.last) {
		w.last = last
	}
}

// running reports whether a write of the object runs now.
func (a *activity) running(bucket, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.keys[bucket+"/"+key]
	return w != nil && w.running > 0
}

// UploadsInFlight is how many requests writing an object are under way.
func (g *Gateway) UploadsInFlight() int64 { return g.uploads.n.Load() }

// Writing reports whether an object of bucket whose key starts with
// prefix is being written (a PUT, a part, a copy or a completion under
// way), has a multipart upload open that a part was written to within
// the last ten minutes, or had a write begin or end at or after since.
// Between two parts of a large kernel trace no request runs and nothing
// under the prefix changes on disk (the parts are kept apart until the
// upload completes): a trace uploaded without a files list looked
// complete there. The uploads an earlier server left open count from
// the start (restoreOpen).
//
// A walk of the prefix's files that began at since saw them settled when
// Writing, asked after it, says false: a write that ended during the walk
// (a same-bytes one gets its modification time back just before it ends)
// may have been seen half done, and no later question about the present
// alone could tell.
func (g *Gateway) Writing(bucket, prefix string, since time.Time) bool {
	return g.uploads.writing(bucket, prefix, since, time.Now())
}

func (a *activity) writing(bucket, prefix string, since, now time.Time) bool {
	want := bucket + "/" + prefix
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, w := range a.keys {
		if !strings.HasPrefix(k, want) {
			continue
		}
		if w.running > 0 || w.open > 0 && now.Sub(w.last) < openIdle || !w.last.Before(since) {
			return true
		}
	}
	return false
}
