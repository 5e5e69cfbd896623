package s3gw

import (
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/versity/versitygw/s3api/middlewares"
)

// An object being uploaded is not on disk until it is complete: a PUT's
// body streams into the bucket's .sgwtmp directory and is linked into
// place at its end, and a multipart upload's parts wait there until the
// upload completes. A trace's bytes, counted from its files alone, stood
// still for as long as a kernel trace of gigabytes took to arrive, then
// jumped. The gateway counts what has arrived of each object not yet in
// place (Gateway.Arriving), for the scanner to add.

// received is what has arrived of one object not yet in place: the bodies
// of the PUTs and parts being read now, and the parts stored of its open
// multipart uploads. It is part of the object's writes; activity.mu
// guards parts.
type received struct {
	streaming atomic.Int64
	parts     map[string]map[int32]int64 // by upload id, then part number: bytes
}

// body counts what is read of a request body as the object's arriving
// until done.
type body struct {
	r    io.Reader
	w    *writes
	read int64
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.read += int64(n)
		b.w.got.streaming.Add(int64(n))
	}
	return n, err
}

// done takes back what was read: the object is in place, or the part
// stored (see stored), or the request failed.
func (b *body) done() { b.w.got.streaming.Add(-b.read) }

// checkedBody is a body whose reader gives its checksum (a trailer's):
// the backend asks the request's body for it, so the count passes it on.
type checkedBody struct{ *body }

func (b checkedBody) Algorithm() string { return b.r.(middlewares.ChecksumReader).Algorithm() }
func (b checkedBody) Checksum() string  { return b.r.(middlewares.ChecksumReader).Checksum() }

// receive returns r counted as arriving of the object, as the request's
// new body, and the count; call its done when the request ends. The
// object's writes stay remembered while the request runs (begin counts
// it), so the count's writes are not pruned meanwhile.
func (a *activity) receive(bucket, key *string, r io.Reader) (io.Reader, *body) {
	a.mu.Lock()
	b := &body{r: r, w: a.at(objectKey(bucket, key))}
	a.mu.Unlock()
	switch r.(type) {
	case nil:
		return nil, b
	case middlewares.ChecksumReader:
		return checkedBody{b}, b
	}
	return b, b
}

// stored records part n of the object's multipart upload id as arrived
// with size bytes, replacing a part of that number sent before.
func (a *activity) stored(bucket, key, id *string, n *int32, size int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.storedLocked(objectKey(bucket, key), aws.ToString(id), aws.ToInt32(n), size)
}

func (a *activity) storedLocked(k, id string, n int32, size int64) {
	w := a.at(k)
	if w.got.parts == nil {
		w.got.parts = map[string]map[int32]int64{}
	}
	if w.got.parts[id] == nil {
		w.got.parts[id] = map[int32]int64{}
	}
	w.got.parts[id][n] = size
}

// closedUpload forgets the parts of the object's upload id, completed
// (the object is in place) or aborted.
func (a *activity) closedUpload(bucket, key, id *string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.keys[objectKey(bucket, key)]; w != nil {
		delete(w.got.parts, aws.ToString(id))
	}
}

// Arriving returns the bytes that have arrived of each object of bucket
// under prefix being uploaded (a PUT's body read so far, a multipart
// upload's parts stored and being sent), by key relative to prefix. An
// upload counts while Writing would count it: a multipart upload left
// open and unused for ten minutes does not. Some of these objects may be
// in place already, the scanner sees them on disk: an upload replacing
// one, or one that just completed.
func (g *Gateway) Arriving(bucket, prefix string) map[string]int64 {
	return g.uploads.arriving(bucket, prefix, time.Now())
}

func (a *activity) arriving(bucket, prefix string, now time.Time) map[string]int64 {
	want := bucket + "/" + prefix
	a.mu.Lock()
	defer a.mu.Unlock()
	var out map[string]int64
	for k, w := range a.keys {
		if !strings.HasPrefix(k, want) || !(w.running > 0 || w.open > 0 && now.Sub(w.last) < openIdle) {
			continue
		}
		n := w.got.streaming.Load()
		for _, parts := range w.got.parts {
			for _, size := range parts {
				n += size
			}
		}
		if n > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[k[len(want):]] = n
		}
	}
	return out
}
