package scanner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/testkit/memstore"
	"github.com/cascade-sim/cascade/tracestate"
)

// The scanner on the in-memory store, with real files in a temporary
// bucket: what it commits, publishes and hands to the post-processor, and
// in what order. Each test calls the scan passes itself (scan, scanTrace
// with an injected clock), so nothing waits for a ticker; TestStart runs
// Run once. No server, no database, no child process.

var _ Store = (*memstore.Store)(nil)

// recorder is the Events of a scanner under test, and the Processor of
// its tracestate.Machine. It
// records what the scanner published and handed on, and at each checks
// that the store already holds it: a change is committed first and
// published (or processed) after, as a copy of the committed row.
type recorder struct {
	t     *testing.T
	store *memstore.Store
	root  string

	mu sync.Mutex
	// events are "updated <id> <state>" and "removed <id>" as published,
	// and "Removed <id>" when Config.Removed is called.
	events    []string
	processed []string // ids, in order
	stopped   []string
	// reprofiled are the ids told to ReadProfiles, in order; take
	// leaves them (see takeReprofiled).
	reprofiled []string
	notify     chan struct{} // if not nil, nudged at each event
}

func (r *recorder) Publish(e cascade.Event) {
	ctx := context.Background()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := e.(type) {
	case cascade.TraceUpdated:
		got, err := r.store.Trace(ctx, e.Trace.ID)
		if err != nil || !reflect.DeepEqual(got, e.Trace) {
			r.t.Errorf("published %s %s that the store does not hold: it has %+v (%v); published %+v", e.Trace.ID, e.Trace.State, got, err, e.Trace)
		}
		r.events = append(r.events, fmt.Sprintf("updated %s %s", e.Trace.ID, e.Trace.State))
	case cascade.TraceRemoved:
		if _, err := r.store.Trace(ctx, e.ID); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			r.t.Errorf("published the removal of %s, which the store still holds (%v)", e.ID, err)
		}
		r.events = append(r.events, "removed "+e.ID)
	default:
		r.t.Errorf("published %T", e)
	}
	if r.notify != nil {
		select {
		case r.notify <- struct{}{}:
		default:
		}
	}
}

func (r *recorder) Process(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tr, err := r.store.Trace(context.Background(), id); err != nil || tr.State != cascade.TraceProcessing {
		r.t.Errorf("Process(%s) with the store's trace %s (%v), want it committed PROCESSING first", id, tr.State, err)
	}
	r.processed = append(r.processed, id)
}

func (r *recorder) Retried(string) {}

func (r *recorder) ReadProfiles(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tr, err := r.store.Trace(context.Background(), id); err != nil || tr.State != cascade.TraceReady {
		r.t.Errorf("ReadProfiles(%s) with the store's trace %s (%v), want it READY", id, tr.State, err)
	}
	r.reprofiled = append(r.reprofiled, id)
}

// takeReprofiled returns the ids told to ReadProfiles since the last call.
func (r *recorder) takeReprofiled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.reprofiled
	r.reprofiled = nil
	return ids
}

func (r *recorder) Stop(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = append(r.stopped, id)
}

// has reports whether an event was recorded since the last take.
func (r *recorder) has(event string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, event)
}

// take returns what was recorded since the last take, as one line.
func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := fmt.Sprintf("events %q processed %q stopped %q", r.events, r.processed, r.stopped)
	r.events, r.processed, r.stopped = nil, nil, nil
	return s
}

// bucket is a scanner under test: its bucket directory, store and
// recorder.
type bucket struct {
	t    *testing.T
	root string
	m    *memstore.Store
	r    *recorder
	s    *Scanner
}

func newBucket(t *testing.T) *bucket {
	root := t.TempDir()
	m := memstore.New()
	r := &recorder{t: t, store: m, root: root}
	b := &bucket{t: t, root: root, m: m, r: r}
	b.s = New(Config{Root: root, Interval: testInterval, Store: m, Events: r, States: tracestate.New(r),
		Removed: func(_ context.Context, id string) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, "Removed "+id)
			return nil
		}})
	return b
}

// write writes the files (slash path: content; "" removes it) of the
// trace id.
func (b *bucket) write(id string, files map[string]string) {
	b.t.Helper()
	for rel, data := range files {
		p := filepath.Join(b.root, id, filepath.FromSlash(rel))
		if data == "" {
			if err := os.Remove(p); err != nil {
				b.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// expect checks what was recorded since the last expect.
func (b *bucket) expect(when, want string) {
	b.t.Helper()
	if got := b.r.take(); got != want {
		b.t.Errorf("%s:\n got %s\nwant %s", when, got, want)
	}
}

func (b *bucket) stored(id string) cascade.Trace {
	b.t.Helper()
	tr, err := b.m.Trace(context.Background(), id)
	if err != nil {
		b.t.Fatalf("trace %s: %v", id, err)
	}
	return tr
}

// TestCompleteUploadIsCommittedThenProcessed: an upload whose files list
// is not yet on disk whole stays uploading; once it is, the scan commits
// it PROCESSING with the metadata.json it completed with, publishes the
// committed row and then hands the trace to the post-processor, once. A
// walk that finds nothing new commits and publishes nothing.
func TestCompleteUploadIsCommittedThenProcessed(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	files := perContext()
	metadata := meta(map[string]any{"model": "m", "trace_gpu_arch": "sm_86"}, files)
	short := with(files, "traces/kernel-2-ctx_0x1.trace.xz", "bb")
	b.write("up", with(short, "metadata.json", metadata))

	b.s.scan(ctx, true, true)
	b.expect("a file short of its listed size", `events ["updated up UPLOADING"] processed [] stopped []`)
	if tr := b.stored("up"); tr.Model == nil || *tr.Model != "m" || tr.TraceGPUArch != "sm_86" || tr.MetadataSum != "" || tr.KernelCount != 2 {
		t.Fatalf("uploading: %+v", tr)
	}

	b.write("up", files)
	b.s.scan(ctx, true, false) // a periodic pass walks every uploading trace
	b.expect("the upload complete", `events ["updated up PROCESSING"] processed ["up"] stopped []`)
	tr := b.stored("up")
	if tr.MetadataSum != sum(metadata) || tr.Error != nil || tr.Bytes != size(files)+int64(len(metadata)) {
		t.Fatalf("processing: %+v", tr)
	}

	writes := b.m.Writes("up")
	b.s.scan(ctx, true, true) // a full pass walks it again
	b.expect("a walk that finds nothing new", `events [] processed [] stopped []`)
	if b.m.Writes("up") != writes {
		t.Errorf("a walk that found nothing new committed (%d writes, were %d)", b.m.Writes("up"), writes)
	}
}

// TestFailedCommitPublishesNothing: a write the store fails is neither
// published nor handed on, and the next pass commits it; a batch the
// store fails is committed trace by trace, each published once, in order.
func TestFailedCommitPublishesNothing(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	files := perContext()
	b.write("one", with(files, "metadata.json", meta(nil, files)))
	down := errors.New("database is down")
	b.m.Fail = func(string, string) error { return down }
	b.s.scan(ctx, true, true)
	b.expect("the store failing", `events [] processed [] stopped []`)
	if ids := b.m.IDs(); len(ids) != 0 {
		t.Fatalf("stored %v", ids)
	}
	b.m.Fail = nil
	b.s.scan(ctx, true, false)
	b.expect("the store back", `events ["updated one PROCESSING"] processed ["one"] stopped []`)

	// Two new traces in one pass go in one batch (UpdateTraces); it fails,
	// and each is committed on its own.
	for _, id := range []string{"two", "three"} {
		b.write(id, with(files, "metadata.json", meta(nil, files)))
	}
	b.m.Fail = func(op, _ string) error {
		if op == "UpdateTraces" {
			return down
		}
		return nil
	}
	b.s.scan(ctx, true, false)
	b.expect("the batch failing", `events ["updated three PROCESSING" "updated two PROCESSING"] processed ["three" "two"] stopped []`)
}

// TestBadMetadataFailsTheTrace: a metadata.json the scanner cannot use
// fails the trace with an error naming the field at fault (or, broken
// JSON, the line), once it has stopped changing for a scan interval when
// it does not parse; a status "failed" fails it at once, and fails a
// trace that is processing too, stopping its post-processor. Each failure
// is committed, then published, then the processor stopped.
func TestBadMetadataFailsTheTrace(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	for _, c := range []struct {
		name, metadata string
		quiet          bool // fails only on a walk a scan interval later
		want           string
	}{
		{"status failed", `{"status": "failed", "error": "CUDA OOM in layer 3"}`, false, `metadata.json: status "failed": CUDA OOM in layer 3`},
		{"syntax", "{\n  \"model\": \"x\",\n  oops\n}", true, "metadata.json: line 3, column 3"},
		{"field type", `{"model": "m", "layers": {"a": 1}}`, true, "metadata.json: layers: want a list of integers or a string"},
		{"string field type", `{"gpu": 7}`, true, "metadata.json: gpu:"},
		{"files absolute", `{"files": [{"path": "/etc/passwd", "size": 1}]}`, false, `metadata.json: files[0]: "/etc/passwd" is an absolute path`},
		{"files dotdot", `{"files": [{"path": "traces/k", "size": 1}, {"path": "traces/../../x", "size": 1}]}`, false, `metadata.json: files[1]: "traces/../../x" has a ".." component`},
		{"files entry shape", `{"files": [{"name": "x"}]}`, true, `files[0]: want {"path": string, "size": integer}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBucket(t)
			b.write("bad", map[string]string{"traces/k": "x", "metadata.json": c.metadata})
			b.s.scanTrace(ctx, "bad", t0)
			if c.quiet {
				b.expect("first sight", `events ["updated bad UPLOADING"] processed [] stopped []`)
				b.s.scanTrace(ctx, "bad", t0.Add(testInterval/2))
				b.expect("half an interval on", `events [] processed [] stopped []`)
				b.s.scanTrace(ctx, "bad", t0.Add(testInterval))
			}
			b.expect("failed", `events ["updated bad FAILED"] processed [] stopped ["bad"]`)
			tr := b.stored("bad")
			if tr.State != cascade.TraceFailed || tr.Error == nil || !strings.Contains(*tr.Error, c.want) {
				t.Fatalf("trace %s with error %v, want FAILED with %q", tr.State, cascade.Deref(tr.Error), c.want)
			}
		})
	}

	t.Run("failed while processing", func(t *testing.T) {
		b := newBucket(t)
		files := perContext()
		b.write("p", with(files, "metadata.json", meta(nil, files)))
		b.s.scanTrace(ctx, "p", t0)
		b.expect("complete", `events ["updated p PROCESSING"] processed ["p"] stopped []`)
		b.write("p", map[string]string{"metadata.json": `{"status": "failed", "error": "the profiler crashed"}`})
		b.s.scanTrace(ctx, "p", t0.Add(time.Second))
		b.expect("metadata.json says failed", `events ["updated p FAILED"] processed [] stopped ["p"]`)
		if tr := b.stored("p"); cascade.Deref(tr.Error) != `metadata.json: status "failed": the profiler crashed` {
			t.Fatalf("error %q", cascade.Deref(tr.Error))
		}
	})
}

// TestUploadUnderTheSampleID: an upload named as the seeded sample takes
// its id, the sample moving aside (committed, then published) first; when
// the upload goes, the sample takes its id back.
func TestUploadUnderTheSampleID(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	sample := &cascade.Trace{ID: samples.SampleID, State: cascade.TraceReady, Sample: true, TraceGPUArch: "sm_90", Prompts: []string{}, Warnings: []string{}}
	if err := b.m.SaveTrace(ctx, sample); err != nil {
		t.Fatal(err)
	}
	b.write(samples.SampleID, map[string]string{"traces/kernel-1-ctx_0x1.trace.xz": "x"})
	b.s.scan(ctx, true, true)
	b.expect("an upload as the sample", `events ["updated .sample READY" "updated sample UPLOADING"] processed [] stopped []`)
	if moved := b.stored(samples.MovedID); !moved.Sample || moved.Seq != sample.Seq || len(moved.Warnings) == 0 || moved.Warnings[0] != samples.MovedWarning {
		t.Fatalf("the sample aside: %+v", moved)
	}
	if up := b.stored(samples.SampleID); up.Sample || up.State != cascade.TraceUploading {
		t.Fatalf("the upload: %+v", up)
	}

	if err := os.RemoveAll(filepath.Join(b.root, samples.SampleID)); err != nil {
		t.Fatal(err)
	}
	b.s.scan(ctx, true, false)
	b.expect("the upload gone", `events ["Removed sample" "removed sample" "removed .sample" "updated sample READY"] processed [] stopped []`)
	if back := b.stored(samples.SampleID); !back.Sample || len(back.Warnings) != 0 {
		t.Fatalf("the sample back: %+v", back)
	}
}

// TestStartReconciles: Run first reconciles the store with the bucket: a
// trace whose directory is gone is deleted, its dependents removed
// (Config.Removed) and then its removal published; a trace still there
// and unchanged is left as it is.
func TestStartReconciles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newBucket(t)
	b.r.notify = make(chan struct{}, 1)
	files := with(perContext(), "traces/kernelslist.g", "kernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n")
	metadata := meta(nil, files)
	b.write("kept", with(files, "metadata.json", metadata))
	for _, id := range []string{"kept", "gone"} {
		tr := &cascade.Trace{ID: id, State: cascade.TraceReady, TraceGPUArch: "sm_90", Prompts: []string{}, Warnings: []string{}, MetadataSum: sum(metadata)}
		if err := b.m.SaveTrace(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- b.s.Run(ctx) }()
	// The first pass ends with kept's walk (its bytes are new to the
	// store); Run returns only after the pass.
	deadline := time.After(10 * time.Second)
	for !b.r.has("updated kept READY") {
		select {
		case <-b.r.notify:
		case err := <-done:
			t.Fatalf("Run returned %v before its first pass was over", err)
		case <-deadline:
			t.Fatalf("the first pass was not over within 10s: %s", b.r.take())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.expect("the start", `events ["Removed gone" "removed gone" "updated kept READY"] processed [] stopped []`)
	if ids := b.m.IDs(); fmt.Sprint(ids) != "[kept]" {
		t.Fatalf("stored %v, want [kept]", ids)
	}
	if tr := b.stored("kept"); tr.State != cascade.TraceReady || tr.Bytes != size(files)+int64(len(metadata)) {
		t.Fatalf("kept: %+v", tr)
	}
}

// TestDeletedFileNamedGone: a data file deleted from a ready trace
// uploaded without a files list is named gone in the trace's note, not
// the file modified last (QA): the scanner keeps the upload's paths summed
// up from the walk its upload sum was kept by.
func TestDeletedFileNamedGone(t *testing.T) {
	ctx := context.Background()
	b := newBucket(t)
	b.write("del", with(perContext(), "metadata.json", `{"model": "m"}`,
		"traces/kernelslist_ctx_0x1.g", "MemcpyHtoD,0x00007f0000000000,4096\nkernel-1-ctx_0x1.tracez\nkernel-2-ctx_0x1.tracez\n",
		"traces/kernelslist.g", "MemcpyHtoD,0x00007f0000000000,4096\nkernel-1-ctx_0x1.tracez\nkernel-2-ctx_0x1.tracez\n",
		"traces/kernel-1-ctx_0x1.tracez", "z1", "traces/kernel-2-ctx_0x1.tracez", "z2"))
	tr := cascade.Trace{ID: "del", State: cascade.TraceReady, Prompts: []string{}, Warnings: []string{}}
	if err := b.m.SaveTrace(ctx, &tr); err != nil {
		t.Fatal(err)
	}
	b.s.scan(ctx, true, true) // adopts its metadata.json's sum
	b.s.scan(ctx, true, true) // and its upload's
	if tr := b.stored("del"); tr.State != cascade.TraceReady || tr.UploadSum == "" {
		t.Fatalf("before: %+v", tr)
	}
	b.r.take()
	// The stats file modified last, which the note named.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(b.root, "del", "traces", "stats_ctx_0x1"), later, later); err != nil {
		t.Fatal(err)
	}
	b.write("del", map[string]string{"traces/kernel-2-ctx_0x1.trace.xz": ""})
	b.s.scan(ctx, true, true)
	tr = b.stored("del")
	want := FilesChangedNote + " (traces/kernel-2-ctx_0x1.trace.xz gone); post-processed again"
	if tr.State != cascade.TraceUploading || len(tr.ScanWarnings) != 1 || !strings.HasPrefix(tr.ScanWarnings[0], want) {
		t.Fatalf("after a kernel trace's deletion: %s, notes %q; want uploading, a note starting %q", tr.State, tr.ScanWarnings, want)
	}
}
