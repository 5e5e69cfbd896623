package postproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/testkit/memstore"
	"github.com/cascade-sim/cascade/tracestate"
)

// The post-processor's moves on the in-memory store, with real trace
// directories: which traces a start queues, when the skip rule finishes a
// trace without the command and when a marker makes it run the command,
// what a finished trace holds, and that every move is committed before it
// is published. The command is one that is not installed, so a trace that
// runs it fails with "post-processor not found" and no child process ever
// starts (exec.LookPath finds nothing); the built-in post-processor runs
// as a child too (`cascade postprocess`), so the full suite's tests cover
// it.

var (
	_ Store = (*memstore.Store)(nil)
	// What a trace's state machine hands complete uploads, failures by
	// metadata.json and retries to, and what it is told of moves by.
	_ tracestate.Processor = (*Processor)(nil)
	_ Reporter             = (*tracestate.Machine)(nil)
)

// missingCommand is a post-processor that is not on PATH.
const missingCommand = "cascade-test-no-such-postprocessor"

// moves is the Events and Reporter of a Processor under test. Each
// published trace must be what the store holds at that moment.
type moves struct {
	t     *testing.T
	store *memstore.Store

	mu     sync.Mutex
	events []string // "<id> <state>" as published
	moved  []string // "<id> <state> ran=<bool>" as the Reporter was told
	nudge  chan struct{}
}

func (m *moves) Publish(e cascade.Event) {
	u, ok := e.(cascade.TraceUpdated)
	if !ok {
		return // LogGrew: no command writes a log here
	}
	got, err := m.store.Trace(context.Background(), u.Trace.ID)
	if err != nil || !reflect.DeepEqual(got, u.Trace) {
		m.t.Errorf("published %s %s that the store does not hold: it has %+v (%v); published %+v", u.Trace.ID, u.Trace.State, got, err, u.Trace)
	}
	m.mu.Lock()
	m.events = append(m.events, fmt.Sprintf("%s %s", u.Trace.ID, u.Trace.State))
	m.mu.Unlock()
}

func (m *moves) Moved(mv tracestate.Move) {
	if want, ok := tracestate.Next(cascade.TraceProcessing, mv.By); !ok || want != mv.To {
		m.t.Errorf("reported %+v: the post-processor moves a trace from PROCESSING, by an event of its own", mv)
	}
	m.mu.Lock()
	m.moved = append(m.moved, fmt.Sprintf("%s %s ran=%v", mv.ID, mv.To, mv.Ran))
	m.mu.Unlock()
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// waitMoved waits until the Reporter was told of n moves and returns them
// and the events, each sorted: traces are finished concurrently.
func (m *moves) waitMoved(n int) (moved, events []string) {
	m.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		m.mu.Lock()
		if len(m.moved) >= n {
			moved, events = slices.Sorted(slices.Values(m.moved)), slices.Sorted(slices.Values(m.events))
			m.mu.Unlock()
			return moved, events
		}
		got := slices.Clone(m.moved)
		m.mu.Unlock()
		select {
		case <-m.nudge:
		case <-deadline:
			m.t.Fatalf("%d of %d traces moved on within 10s: %q", len(got), n, got)
		}
	}
}

// rig is a bucket, a store and a Processor on them.
type rig struct {
	t    *testing.T
	root string
	work string
	m    *memstore.Store
	mv   *moves
}

func newRig(t *testing.T) *rig {
	m := memstore.New()
	return &rig{t: t, root: t.TempDir(), work: t.TempDir(), m: m,
		mv: &moves{t: t, store: m, nudge: make(chan struct{}, 1)}}
}

// processor returns a Processor on the rig (not running) that handles up
// to concurrency traces at once.
func (r *rig) processor(concurrency int) *Processor {
	return New(Config{Command: []string{missingCommand}, Root: r.root, WorkDir: r.work, Concurrency: concurrency,
		Store: r.m, Events: r.mv, Logger: slog.New(slog.NewTextHandler(testLog{r.t}, nil))})
}

// testLog sends the processor's log to the test's, shown on failure.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// run runs p until the test ends, or until the function it returns is
// called; that function returns once Run has.
func (r *rig) run(p *Processor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, r.mv) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				r.t.Errorf("Run: %v", err)
			}
		})
	}
	r.t.Cleanup(stop)
	return stop
}

// trace writes a trace's files (slash path: content) and then stores it
// in the given state.
func (r *rig) trace(id string, state cascade.TraceState, files map[string]string) {
	r.t.Helper()
	r.files(id, files) // first: a running processor may see the trace at once
	tr := &cascade.Trace{ID: id, State: state, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{"from the scan"}}
	if err := r.m.SaveTrace(context.Background(), tr); err != nil {
		r.t.Fatal(err)
	}
}

// files writes files of the trace id (slash path: content).
func (r *rig) files(id string, files map[string]string) {
	r.t.Helper()
	for rel, data := range files {
		p := filepath.Join(r.root, id, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rig) stored(id string) cascade.Trace {
	r.t.Helper()
	tr, err := r.m.Trace(context.Background(), id)
	if err != nil {
		r.t.Fatalf("trace %s: %v", id, err)
	}
	return tr
}

const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"

func statsRow(i int) string {
	return fmt.Sprintf("kernel-%d-ctx_0x1.trace, _Z6vecAddPdS_S_i, %d, 1, 1, %d, 128, 1, 1, 128, %d,%d\n", i, i, i, 1000+i, 1000+i)
}

// raw is an upload the post-processor must run for: kernel traces, their
// list and stats, no kernelslist.g.
func raw() map[string]string {
	return map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernel-2-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernelslist_ctx_0x1":    "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0x1.trace\nkernel-2-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":          statsHeader + statsRow(1) + statsRow(2),
	}
}

// processed is raw with the processed kernelslist.g an upload may bring,
// which skips the command; its stats have a bad row too.
func processed() map[string]string {
	f := raw()
	f["traces/kernelslist.g"] = "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n"
	f["traces/stats_ctx_0x1"] += "kernel-3-ctx_0x1.trace, _Z1kv, x, 1, 1, 1, 32, 1, 1, 32, 1,1\n"
	return f
}

// TestStartFinishesWhatIsProcessing: a start queues the traces still
// processing, in their stored order, and none other. One that holds its
// own kernelslist.g moves to ready without the command, with its stats'
// kernels (in a batch; one with big stats files on its own) and warnings
// and the kernel count of kernelslist.g; one without runs the command,
// which is not found, and fails saying how to set it. Each move is
// committed, then published, then told to the Reporter.
func TestStartFinishesWhatIsProcessing(t *testing.T) {
	r := newRig(t)
	r.trace("uploading", cascade.TraceUploading, raw())
	r.trace("processed", cascade.TraceProcessing, processed())
	r.trace("raw", cascade.TraceProcessing, raw())
	r.trace("ready", cascade.TraceReady, nil)
	// Stats past smallStatsBytes: finished outside the batches, its kernels
	// through ReplaceKernelsFrom.
	const bigN = 25_000
	var stats, list strings.Builder
	stats.WriteString(statsHeader)
	for i := 1; i <= bigN; i++ {
		stats.WriteString(statsRow(i))
		fmt.Fprintf(&list, "kernel-%d-ctx_0x1.traceg\n", i)
	}
	if stats.Len() <= smallStatsBytes {
		t.Fatalf("big stats of %d bytes are not past smallStatsBytes", stats.Len())
	}
	r.trace("big", cascade.TraceProcessing, map[string]string{"traces/stats_ctx_0x1": stats.String(), "traces/kernelslist.g": list.String()})
	untouched := map[string]int{"uploading": r.m.Writes("uploading"), "ready": r.m.Writes("ready")}

	r.run(r.processor(2))
	moved, events := r.mv.waitMoved(3)
	if want := []string{"big READY ran=false", "processed READY ran=false", "raw FAILED ran=true"}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
	if want := []string{"big READY", "processed READY", "raw FAILED"}; !reflect.DeepEqual(events, want) {
		t.Fatalf("published %q, want %q", events, want)
	}

	tr := r.stored("processed")
	if tr.KernelCount != 2 || tr.Error != nil || !reflect.DeepEqual(tr.Warnings, []string{`traces/stats_ctx_0x1:4: grid_dimX: "x" is not a non-negative integer`}) {
		t.Errorf("processed: %+v", tr)
	}
	ks := r.m.Kernels("processed")
	if len(ks) != 2 || ks[0].TraceFile != "kernel-1-ctx_0x1.trace" || ks[1].KernelID != 2 || cascade.Deref(ks[1].Context) != "0x1" || ks[1].GridX != 2 || cascade.Deref(ks[1].Instructions) != 1002 {
		t.Errorf("kernels of processed: %+v", ks)
	}
	if tr := r.stored("big"); tr.KernelCount != bigN || len(r.m.Kernels("big")) != bigN || len(tr.Warnings) != 0 {
		t.Errorf("big: %d kernels counted, %d stored, warnings %q; want %d", tr.KernelCount, len(r.m.Kernels("big")), tr.Warnings, bigN)
	}
	tr = r.stored("raw")
	if msg := cascade.Deref(tr.Error); !strings.Contains(msg, "post-processor not found") || !strings.Contains(msg, missingCommand) || !strings.Contains(msg, "CASCADE_POSTPROCESS_CMD") {
		t.Errorf("raw fails with %q", msg)
	}
	if len(r.m.Kernels("raw")) != 0 {
		t.Errorf("a failed trace got kernels")
	}
	for id, n := range untouched {
		if got := r.m.Writes(id); got != n {
			t.Errorf("%s, not processing, was written %d times at start", id, got-n)
		}
	}
}

// TestMarkerRunsTheCommandAgain: a kernelslist.g that a post-processor
// left (its marker, from a server that stopped mid-run, says so) is not
// taken for the upload's own: the command runs again. A marker of another
// directory (the trace was deleted and uploaded again, processed) does not
// count, nor does a kernelslist.g the upload brought after the
// post-processor ran.
func TestMarkerRunsTheCommandAgain(t *testing.T) {
	r := newRig(t)
	p := r.processor(2)
	if err := os.MkdirAll(filepath.Join(r.work, "postprocess"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"interrupted", "replaced", "reuploaded"} {
		r.trace(id, cascade.TraceProcessing, processed())
	}
	dir := func(id string) string { return filepath.Join(r.root, id) }
	// interrupted: the marker of a post-processor running in this
	// directory, which the start settles to what it left behind.
	if err := p.writeMarker("interrupted", dir("interrupted")); err != nil {
		t.Fatal(err)
	}
	// replaced: the marker is of the directory before it was deleted.
	if err := p.writeMarker("replaced", dir("replaced")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir("replaced"), filepath.Join(t.TempDir(), "old")); err != nil {
		t.Fatal(err)
	}
	r.files("replaced", processed()) // a new directory: the old one's inode is still taken
	// reuploaded: a post-processor left a kernelslist.g, and the upload
	// then brought its own in its place (of another size, so that it
	// differs whatever inode and time it gets).
	list := filepath.Join(dir("reuploaded"), "traces", "kernelslist.g")
	p.leftMarker("reuploaded", dir("reuploaded"), list)
	if err := os.Remove(list); err != nil {
		t.Fatal(err)
	}
	r.files("reuploaded", map[string]string{"traces/kernelslist.g": "MemcpyHtoD,0x0000000000002000,128\nkernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n"})

	r.run(p)
	moved, _ := r.mv.waitMoved(3)
	if want := []string{"interrupted FAILED ran=true", "replaced READY ran=false", "reuploaded READY ran=false"}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
	if msg := cascade.Deref(r.stored("interrupted").Error); !strings.Contains(msg, "post-processor not found") {
		t.Fatalf("interrupted fails with %q; want the command run again", msg)
	}
	for _, id := range []string{"replaced", "reuploaded"} {
		if _, err := os.Stat(p.markerPath(id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: its stale marker stays (%v)", id, err)
		}
	}
}

// TestProcessAfterStart: a trace queued after the start (the scanner's
// Process) is finished the same way; one that left processing before its
// turn is left as it is, its command not run, and one whose stats file
// cannot be read fails naming it.
func TestProcessAfterStart(t *testing.T) {
	r := newRig(t)
	p := r.processor(1) // in turn: "moved on" is handled before the others
	r.trace("at start", cascade.TraceProcessing, processed())
	r.run(p)
	r.mv.waitMoved(1) // the start has read the store: what follows only Process queues
	files := processed()
	r.trace("new", cascade.TraceProcessing, files)
	r.trace("moved on", cascade.TraceUploading, raw())
	unreadable := processed()
	delete(unreadable, "traces/stats_ctx_0x1")
	r.files("unreadable", unreadable)
	if err := os.Symlink("nowhere", filepath.Join(r.root, "unreadable", "traces", "stats_ctx_0x1")); err != nil {
		t.Fatal(err)
	}
	r.trace("unreadable", cascade.TraceProcessing, nil)
	for _, id := range []string{"moved on", "new", "unreadable"} {
		p.Process(id)
	}
	moved, _ := r.mv.waitMoved(3)
	if want := []string{"at start READY ran=false", "new READY ran=false", "unreadable FAILED ran=false"}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
	if msg := cascade.Deref(r.stored("unreadable").Error); !strings.Contains(msg, "stats_ctx_0x1") {
		t.Errorf("unreadable fails with %q; want it to name the stats file", msg)
	}
	if tr := r.stored("moved on"); tr.State != cascade.TraceUploading || r.m.Writes("moved on") != 1 {
		t.Errorf("moved on: %s, %d writes; want it left uploading", tr.State, r.m.Writes("moved on"))
	}
	if _, err := os.Stat(p.LogPath("moved on")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("moved on: the command ran for it (its log: %v)", err)
	}
}

// TestStoreDownLeavesItProcessing: when the store fails the finishing
// writes, the trace stays processing, nothing is published, and the next
// start finishes it.
func TestStoreDownLeavesItProcessing(t *testing.T) {
	r := newRig(t)
	r.trace("tr", cascade.TraceProcessing, processed())
	gaveUp := make(chan struct{})
	var once sync.Once
	r.m.Fail = func(op, _ string) error {
		if op == "ReplaceKernelsFrom" { // the last write a finish tries, after the batch's
			once.Do(func() { close(gaveUp) })
		}
		return errors.New("database is down")
	}
	stop := r.run(r.processor(2))
	select {
	case <-gaveUp:
	case <-time.After(10 * time.Second):
		t.Fatal("no finish tried within 10s")
	}
	stop()
	r.mv.mu.Lock()
	events, moved := r.mv.events, r.mv.moved
	r.mv.mu.Unlock()
	if tr := r.stored("tr"); tr.State != cascade.TraceProcessing || len(events) != 0 || len(moved) != 0 {
		t.Fatalf("with the store down: %s, published %q, moved %q; want it left processing, unpublished", tr.State, events, moved)
	}

	r.m.Fail = nil
	r.run(r.processor(2))
	if moved, events := r.mv.waitMoved(1); !reflect.DeepEqual(moved, []string{"tr READY ran=false"}) || !reflect.DeepEqual(events, []string{"tr READY"}) {
		t.Fatalf("the next start: moved %q, published %q", moved, events)
	}
}

// TestRawTracesListed: an upload whose own kernelslist.g names raw NVBit
// traces, which no Accel-Sim reads, is not taken as processed. With the
// tracer's kernel list it runs the post-processor (here one that is not
// installed, so it fails saying so); without, it fails at once naming the
// list, the raw trace and what to upload instead.
func TestRawTracesListed(t *testing.T) {
	r := newRig(t)
	withList := raw()
	withList["traces/kernelslist.g"] = "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0x1.trace\nkernel-2-ctx_0x1.trace\n"
	noList := map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "-kernel name = k\n",
		"traces/kernelslist.g":          withList["traces/kernelslist.g"],
		"traces/stats_ctx_0x1":          statsHeader + statsRow(1),
	}
	r.trace("with-list", cascade.TraceProcessing, withList)
	r.trace("no-list", cascade.TraceProcessing, noList)
	r.run(r.processor(2))
	moved, _ := r.mv.waitMoved(2)
	if want := []string{"no-list FAILED ran=false", "with-list FAILED ran=true"}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
	if msg := cascade.Deref(r.stored("with-list").Error); !strings.Contains(msg, "post-processor not found") {
		t.Errorf("with-list fails with %q, want the post-processor run", msg)
	}
	msg := cascade.Deref(r.stored("no-list").Error)
	for _, want := range []string{"traces/kernelslist.g names kernel-1-ctx_0x1.trace, a raw NVBit trace", "no tracer kernel list", "upload the trace again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no-list fails with %q, want it to say %q", msg, want)
		}
	}
}

// TestLeftoverSpillsRemoved: a start removes the spill folders that
// built-in post-processors killed with an earlier server left in the
// work directory, and nothing else there.
func TestLeftoverSpillsRemoved(t *testing.T) {
	r := newRig(t)
	spill := filepath.Join(r.work, "posttraces-123456")
	if err := os.MkdirAll(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(spill, "part-0"), []byte("a kernel's spill"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(r.work, "keep.txt")
	if err := os.WriteFile(other, []byte("not a spill"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A trace to finish: once it has moved, the start is behind.
	r.trace("processed", cascade.TraceProcessing, processed())
	stop := r.run(r.processor(1))
	r.mv.waitMoved(1)
	stop()
	if _, err := os.Stat(spill); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spill folder: %v, want it removed", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file of the work directory: %v", err)
	}
}

// TestListsDisagree: a trace whose kernelslist.g names a kernel no stats
// row lists, and whose stats list another twice, is ready with warnings
// saying so, finished in a batch (small stats) or on its own (big), as
// finish reads both.
func TestListsDisagree(t *testing.T) {
	r := newRig(t)
	files := raw()
	files["traces/kernelslist.g"] = "kernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\nkernel-3-ctx_0x1.traceg\n"
	files["traces/stats_ctx_0x1"] = statsHeader + statsRow(1) + statsRow(2) + statsRow(2)
	r.trace("small", cascade.TraceProcessing, files)
	var big strings.Builder
	big.WriteString(statsHeader)
	for big.Len() <= smallStatsBytes {
		big.WriteString(statsRow(1))
	}
	bigFiles := maps.Clone(files)
	bigFiles["traces/stats_ctx_0x1"] = big.String()
	r.trace("big", cascade.TraceProcessing, bigFiles)
	r.run(r.processor(2))
	r.mv.waitMoved(2)
	for _, id := range []string{"small", "big"} {
		tr := r.stored(id)
		got := strings.Join(tr.Warnings, "\n")
		want := []string{"traces/kernelslist.g names 1 kernel trace that no stats file lists (kernel 3 of context 0x1 first): the kernel list lacks it"}
		if id == "small" {
			want = append(want, "the stats files list 1 kernel more than once (kernel 2 of context 0x1 first)")
		} else {
			want[0] = "traces/kernelslist.g names 2 kernel traces that no stats file lists (kernel 2 of context 0x1 first): the kernel list lacks them"
			want = append(want, "the stats files list 1 kernel more than once (kernel 1 of context 0x1 first)")
		}
		if tr.State != cascade.TraceReady {
			t.Errorf("%s: %s, want READY", id, tr.State)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warnings %q, want %q", id, tr.Warnings, w)
			}
		}
	}
}
