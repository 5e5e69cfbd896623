package scanner

import (
	"context"
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
	b.write("tr", map[string]string{"traces/kernelslist.g": "-trace = kernel-1-ctx_0x1.traceg\n"})
	if _, _, err := b.m.UpdateTrace(ctx, "tr", func(tr *cascade.Trace, _ bool) error {
		tr.State = cascade.TraceReady
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b.s.cfg.States.Moved(tracestate.Move{ID: "tr", To: cascade.TraceReady, By: tracestate.Processed, Ran: true})

	// The early walk is committed after the move.
	e, l, ok := b.s.inspectWalk(ctx, early, time.Now())
	if !ok {
		t.Fatal("the early walk was not inspected")
	}
	if l.hasKernelsListG {
		t.Fatal("the early walk saw kernelslist.g: the test does not test what it says")
	}
	tr, c, ok := b.s.commit(ctx, "tr", e, l)
	b.s.committed(ctx, "tr", e, l, tr, c, ok)
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
