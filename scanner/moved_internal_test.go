package scanner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/tracestate"
)

// countingStore counts the scanner's commits, one per walk of a trace that
// is there (a walk that changes nothing commits nothing but still asks).
type countingStore struct {
	*db.DB
	commits map[string]int
}

func (c *countingStore) UpdateTraceAndKernels(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) (bool, error)) (cascade.Trace, bool, error) {
	c.commits[id]++
	return c.DB.UpdateTraceAndKernels(ctx, id, fn)
}

type queued []string

func (q *queued) Process(id string)   { *q = append(*q, id) }
func (q *queued) Stop(string)         {}
func (q *queued) Retried(string)      {}
func (q *queued) ReadProfiles(string) {}

// TestMovedWalksOnlyWhatChanged: a trace the post-processor moved on
// without running (as it reports to the tracestate.Machine) is walked
// again only when its files may have changed since the walk that sent it
// to processing; one it ran for always is.
func TestMovedWalksOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(id, rel, data string) {
		p := filepath.Join(root, id, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"traces/kernel-1-ctx_0x1.trace.xz": "aaaa",
		"traces/kernelslist_ctx_0x1":       "kernel-1-ctx_0x1.trace.xz\n",
		"traces/kernelslist.g":             "kernel-1-ctx_0x1.traceg\n",
	}
	ids := []string{"same", "kicked", "added", "ran"}
	for _, id := range ids {
		var list []map[string]any
		for rel, data := range files {
			write(id, rel, data)
			list = append(list, map[string]any{"path": rel, "size": len(data)})
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "files": list})
		write(id, "metadata.json", string(b))
	}
	d, err := db.Open(ctx, db.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	store := &countingStore{DB: d, commits: map[string]int{}}
	var q queued
	states := tracestate.New(&q)
	s := New(Config{Root: root, Store: store, Events: &events.Broker{}, States: states})
	s.watching = true // as Run with file-system events; the test kicks by hand
	s.scan(ctx, true, true)
	if len(q) != len(ids) {
		t.Fatalf("queued for processing: %v, want %v", q, ids)
	}
	// What the post-processor does, but for the scanner: the traces are ready.
	for _, id := range ids {
		_, _, err := d.UpdateTrace(ctx, id, func(tr *cascade.Trace, _ bool) error { tr.State = cascade.TraceReady; return nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	// While processing: a file rewritten in place (its directory does not
	// change) whose event the scanner lets go by, and a file added.
	write("kicked", "traces/kernel-1-ctx_0x1.trace.xz", "aaaaaaaa")
	// The event must reach the processing check, not wait for its share
	// of walk time (walkShare) after the first walk: a slow first walk
	// (a loaded machine) deferred it, and the test saw no event go by.
	s.traces["kicked"].walkCost = 0
	s.Kick("kicked")
	s.scan(ctx, false, false)
	write("added", "traces/extra", "x")

	before := map[string]int{}
	for _, id := range ids {
		before[id] = store.commits[id]
		states.Moved(tracestate.Move{ID: id, To: cascade.TraceReady, By: tracestate.Processed, Ran: id == "ran"})
	}
	s.scan(ctx, false, false)
	for _, id := range ids {
		walked := store.commits[id] > before[id]
		if want := id != "same"; walked != want {
			t.Errorf("%s: walked after the move = %v, want %v", id, walked, want)
		}
		// kicked's data file changed after its upload completed: it
		// starts over, and waits for a metadata.json that lists the
		// file's new size.
		want := cascade.TraceReady
		if id == "kicked" {
			want = cascade.TraceUploading
		}
		if st := s.traces[id].state; st != want {
			t.Errorf("%s: the scanner saw it %s, want %s", id, st, want)
		}
	}
	if tr, err := d.Trace(ctx, "kicked"); err != nil || tr.Bytes == 0 {
		t.Fatalf("kicked: %+v, %v", tr, err)
	} else if want := int64(8 + len(files["traces/kernelslist_ctx_0x1"]) + len(files["traces/kernelslist.g"])); tr.Bytes < want {
		t.Errorf("kicked: %d bytes, want at least %d (the rewritten file's)", tr.Bytes, want)
	}
}
