package s3gw

import (
	"testing"
	"time"
)

// TestWriting: an object is being written while a write of it runs, and
// while a multipart upload of it is open and was written to within
// openIdle; not once the upload completes or is aborted, nor for another
// prefix or bucket.
func TestWriting(t *testing.T) {
	var a activity
	b, k := "cascade", "traces/t1/traces/kernel-1.trace"
	other := "traces/t2/traces/kernel-1.trace"
	now := time.Now()
	is := func(prefix string, want bool, at time.Time) {
		t.Helper()
		if got := a.writing(b, prefix, at); got != want {
			t.Fatalf("writing(%q) = %v, want %v", prefix, got, want)
		}
	}
	is("traces/t1/", false, now)

	end := a.begin(&b, &k) // a PUT
	is("traces/t1/", true, now)
	is("traces/t2/", false, now)
	if a.writing("other", "traces/t1/", now) {
		t.Fatal("another bucket's prefix is written")
	}
	end()
	is("traces/t1/", false, now)

	a.opened(&b, &k, 1) // CreateMultipartUpload: no request runs between parts
	is("traces/t1/", true, time.Now())
	is("traces/t1/", false, time.Now().Add(openIdle+time.Second)) // left open by a client gone
	end = a.begin(&b, &k)                                         // CompleteMultipartUpload
	a.opened(&b, &k, -1)
	is("traces/t1/", true, time.Now())
	end()
	is("traces/t1/", false, time.Now())

	a.opened(&b, &other, 1)
	a.opened(&b, &other, -1) // AbortMultipartUpload
	is("traces/t2/", false, time.Now())
	if n := len(a.keys); n != 0 || a.n.Load() != 0 {
		t.Errorf("%d objects and %d writes still counted", n, a.n.Load())
	}
}
