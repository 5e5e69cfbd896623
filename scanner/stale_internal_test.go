package scanner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracestate"
)

// TestWalkBeforeReadyLeavesItReady: a walk that began while the trace was
// processing, before the post-processor wrote traces/kernelslist.g and
// made the trace READY, is not applied to the READY trace (it would read
// as "kernelslist.g removed": the trace uploaded again, post-processed
// again, and a run launched meanwhile refused). The trace stays READY,
// and the walk that follows, begun after the move, is applied.
func TestWalkBeforeReadyLeavesItReady(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	files := perContext()
	b.write("tr", with(files, "metadata.json", meta(map[string]any{"model": "m"}, files)))
	b.s.scan(ctx, true, true)
	b.expect("a complete upload", `events ["updated tr PROCESSING"] processed ["tr"] stopped []`)

	// A periodic pass walks the trace while the post-processor works
	// (its files change the directory's signature) ...
	early := walkTrace(b.s.dir("tr"), "tr")
	// ... which then writes kernelslist.g, makes the trace READY and
	// reports it.
	b.processed(ctx, "tr")

	// The early walk is committed after the move.
	if l := b.apply(ctx, early); l.hasKernelsListG {
		t.Fatal("the early walk saw kernelslist.g: the test does not test what it says")
	}
	if got := b.stored("tr"); got.State != cascade.TraceReady {
		t.Fatalf("after the early walk: %s (%v), want READY", got.State, got.ScanWarnings)
	}
	b.expect("the early walk", `events [] processed [] stopped []`)

	// The next pass walks it again (the post-processor's outcome, and
	// the stale walk's refresh): READY, with the bytes of kernelslist.g.
	b.s.scan(ctx, false, false)
	got := b.stored("tr")
	if got.State != cascade.TraceReady || got.Bytes <= early.tree.Bytes() {
		t.Fatalf("after the next walk: %s, %d bytes (the early walk saw %d); want READY and more", got.State, got.Bytes, early.tree.Bytes())
	}
	b.expect("the next walk", `events ["updated tr READY"] processed [] stopped []`)
	if st := b.s.traces["tr"].state; st != cascade.TraceReady {
		t.Errorf("the scanner sees the trace %s, want READY", st)
	}
}

// TestWriteEndedDuringTheWalkIsNoChange: a data file of a ready trace
// written again through the S3 endpoint with the bytes it had is in place
// with a new modification time until its write ends, when it gets the
// earlier one back. A walk that saw it in between is not a change, though
// the write has ended by the time the walk is inspected: Config.Writing
// is asked from the walk's start. Such a walk started the trace over (CI:
// TestIdenticalReuploadKeepsTheTraceReady). A walk that begins once the
// write is over sees the files as they were, and the trace stays READY.
func TestWriteEndedDuringTheWalkIsNoChange(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	var ended time.Time // when the last write of the trace's files ended
	b.s.cfg.Writing = func(_ string, since time.Time) bool { return !since.After(ended) }
	files := perContext()
	b.write("tr", with(files, "metadata.json", meta(map[string]any{"model": "m"}, files)))
	b.s.scan(ctx, true, true)
	b.processed(ctx, "tr")
	b.s.scan(ctx, true, false)
	b.r.take()

	// The PUT's file is in place, with a new time; a walk sees it ...
	raw := filepath.Join(b.root, "tr", "traces", "kernel-1-ctx_0x1.trace.xz")
	fi, err := os.Stat(raw)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Minute)
	if err := os.Chtimes(raw, later, later); err != nil {
		t.Fatal(err)
	}
	during := walkTrace(b.s.dir("tr"), "tr")
	// ... then the write ends: the same bytes, the earlier time back.
	if err := os.Chtimes(raw, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	ended = time.Now()

	b.apply(ctx, during)
	if got := b.stored("tr"); got.State != cascade.TraceReady {
		t.Fatalf("after a walk during the write: %s (%v), want READY", got.State, got.Warnings)
	}
	b.expect("a walk during the write", `events [] processed [] stopped []`)

	time.Sleep(time.Millisecond) // the next walk begins after the write ended
	b.s.scan(ctx, true, false)   // a periodic pass walks it again: it was written
	if got := b.stored("tr"); got.State != cascade.TraceReady {
		t.Fatalf("after the next walk: %s (%v), want READY", got.State, got.Warnings)
	}
	b.expect("the next walk", `events [] processed [] stopped []`)
	if b.s.traces["tr"].writing {
		t.Error("the scanner still sees the trace written")
	}
}

// processed does what the post-processor does when it is done with the
// trace id: it writes kernelslist.g, makes the trace READY and reports it.
func (b *bucket) processed(ctx context.Context, id string) {
	b.t.Helper()
	b.write(id, map[string]string{"traces/kernelslist.g": "-trace = kernel-1-ctx_0x1.traceg\n"})
	if _, _, err := b.m.UpdateTrace(ctx, id, func(tr *cascade.Trace, _ bool) error {
		tr.State = cascade.TraceReady
		return nil
	}); err != nil {
		b.t.Fatal(err)
	}
	b.s.cfg.States.Moved(tracestate.Move{ID: id, To: cascade.TraceReady, By: tracestate.Processed, Ran: true})
}

// apply inspects the walk w and commits what it says, as a scan does with
// its walks, and returns what it said.
func (b *bucket) apply(ctx context.Context, w walked) look {
	b.t.Helper()
	e, l, ok := b.s.inspectWalk(ctx, w, time.Now())
	if !ok {
		b.t.Fatalf("the walk of %s was not inspected", w.id)
	}
	tr, c, ok := b.s.commit(ctx, w.id, e, l)
	b.s.committed(ctx, w.id, e, l, tr, c, ok)
	return l
}
