package s3gw

import (
	"bytes"
	"io"
	"maps"
	"testing"
	"time"

	"github.com/versity/versitygw/s3api/middlewares"
)

// TestArriving: what has arrived of an object not yet in place is the
// body read so far of a request running now, plus the parts stored of
// its open multipart uploads (a part sent again counts once); none of it
// once the upload completes or is aborted, or is left unused for
// openIdle; nothing of another prefix or bucket.
func TestArriving(t *testing.T) {
	var a activity
	b, k, other := "cascade", "traces/t1/traces/kernel-1.trace", "traces/t2/traces/kernel-1.trace"
	id, id2 := "up-1", "up-2"
	is := func(prefix string, want map[string]int64, now time.Time) {
		t.Helper()
		if got := a.arriving(b, prefix, now); !maps.Equal(got, want) {
			t.Fatalf("arriving(%q) = %v, want %v", prefix, got, want)
		}
	}
	is("traces/t1/", nil, time.Now())

	// A PUT: its body counts as it is read, and not once it ends.
	end := a.begin(&b, &k)
	r, body := a.receive(&b, &k, bytes.NewReader(make([]byte, 1000)))
	if _, err := io.CopyN(io.Discard, r, 300); err != nil {
		t.Fatal(err)
	}
	is("traces/t1/", map[string]int64{"traces/kernel-1.trace": 300}, time.Now())
	is("traces/t2/", nil, time.Now())
	if got := a.arriving("other", "traces/t1/", time.Now()); got != nil {
		t.Fatalf("another bucket: %v", got)
	}
	io.Copy(io.Discard, r)
	body.done()
	end()
	is("traces/t1/", nil, time.Now())

	// A multipart upload: parts stored count while it is open.
	part := func(key, upload string, n int32, size int) {
		t.Helper()
		end := a.begin(&b, &key)
		r, body := a.receive(&b, &key, bytes.NewReader(make([]byte, size)))
		io.Copy(io.Discard, r)
		a.stored(&b, &key, &upload, &n, body.read)
		body.done()
		end()
	}
	a.opened(&b, &k, 1)
	part(k, id, 1, 500)
	part(k, id, 2, 400)
	part(k, id, 2, 450) // sent again
	is("traces/t1/", map[string]int64{"traces/kernel-1.trace": 950}, time.Now())
	is("traces/t1/", nil, time.Now().Add(openIdle+time.Second)) // left by its client
	a.opened(&b, &other, 1)
	part(other, id2, 1, 70)
	is("traces/", map[string]int64{"t1/traces/kernel-1.trace": 950, "t2/traces/kernel-1.trace": 70}, time.Now())

	a.opened(&b, &k, -1) // CompleteMultipartUpload
	a.closedUpload(&b, &k, &id)
	a.opened(&b, &other, -1) // AbortMultipartUpload
	a.closedUpload(&b, &other, &id2)
	is("traces/", nil, time.Now())

	// An upload an earlier server left open counts its stored parts.
	a.restore(b, k, "up-3", time.Now(), map[int32]int64{1: 10, 2: 20})
	part(k, "up-3", 2, 25) // resumed: part 2 sent again
	is("traces/t1/", map[string]int64{"traces/kernel-1.trace": 35}, time.Now())
}

// TestReceiveKeepsTheChecksum: a body that gives its checksum (a trailer's,
// as the AWS CLI sends) still gives it once counted, for the backend asks
// the body it is handed; a plain body stays plain, and none stays none.
func TestReceiveKeepsTheChecksum(t *testing.T) {
	var a activity
	b, k := "cascade", "traces/t1/metadata.json"
	crc := &crc64Body{r: bytes.NewReader([]byte("{}"))}
	r, _ := a.receive(&b, &k, crc)
	cr, ok := r.(middlewares.ChecksumReader)
	if !ok || cr.Algorithm() != "crc64nvme" {
		t.Fatalf("a checksummed body counted is %T, without its checksum", r)
	}
	io.Copy(io.Discard, r)
	if cr.Checksum() != crc.Checksum() {
		t.Fatalf("checksum %q, want %q", cr.Checksum(), crc.Checksum())
	}
	if r, _ := a.receive(&b, &k, bytes.NewReader(nil)); r == nil {
		t.Fatal("a plain body is lost")
	} else if _, ok := r.(middlewares.ChecksumReader); ok {
		t.Fatal("a plain body counted claims a checksum")
	}
	if r, _ := a.receive(&b, &k, nil); r != nil {
		t.Fatalf("no body counted is %T", r)
	}
}
