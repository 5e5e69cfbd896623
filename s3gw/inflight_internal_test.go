package s3gw

import (
	"testing"
	"time"
)

// TestWriting: an object is being written while a write of it runs, and
// while a multipart upload of it is open and was written to within
// openIdle; not once the upload completes or is aborted, nor for another
// prefix or bucket. Asked since a time, it is also written when a write
// of it began or ended since then.
func TestWriting(t *testing.T) {
	var a activity
	b, k := "cascade", "traces/t1/traces/kernel-1.trace"
	other := "traces/t2/traces/kernel-1.trace"
	now := time.Now()
	is := func(prefix string, want bool, at time.Time) {
		t.Helper()
		if got := a.writing(b, prefix, at.Add(time.Hour), at); got != want {
			t.Fatalf("writing(%q) = %v, want %v", prefix, got, want)
		}
	}
	is("traces/t1/", false, now)

	end := a.begin(&b, &k) // a PUT
	is("traces/t1/", true, now)
	is("traces/t2/", false, now)
	if a.writing("other", "traces/t1/", now, now) {
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
	if a.n.Load() != 0 {
		t.Errorf("%d writes still counted", a.n.Load())
	}

	// Objects idle for endedKept are forgotten at the next write.
	for _, w := range a.keys {
		w.last = w.last.Add(-endedKept - time.Second)
	}
	a.pruned = time.Time{}
	third := "traces/t3/kernel-1.trace"
	a.begin(&b, &third)()
	if n := len(a.keys); n != 1 {
		t.Errorf("%d objects remembered, want 1 (the last written)", n)
	}
}

// TestWritingSince: a walk of a trace that began before a write ended saw
// its files settled only if no write began or ended since it began, even
// when no write runs by the time it asks.
func TestWritingSince(t *testing.T) {
	var a activity
	b, k := "cascade", "traces/t1/traces/kernel-1.trace"
	walk := time.Now() // a walk begins; a same-bytes PUT ends during it
	a.begin(&b, &k)()
	if !a.writing(b, "traces/t1/", walk, time.Now()) {
		t.Fatal("a write that ended during the walk is not reported")
	}
	if a.writing(b, "traces/t2/", walk, time.Now()) {
		t.Fatal("another trace's prefix is written")
	}
	if next := time.Now().Add(time.Millisecond); a.writing(b, "traces/t1/", next, next) {
		t.Fatal("a walk that began once the write had ended sees it written")
	}
}
