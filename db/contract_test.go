package db_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/memstore"
)

// store is what the contract exercises: the trace methods of
// scanner.Store and postproc.Store, and SaveTrace and ReplaceKernels to
// seed it; kernels reads a trace's kernel list.
type store interface {
	SaveTrace(ctx context.Context, t *cascade.Trace) error
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	AllTraces(ctx context.Context) ([]cascade.Trace, error)
	UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error)
	UpdateTraceAndKernels(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) (bool, error)) (cascade.Trace, bool, error)
	UpdateTraces(ctx context.Context, ws []cascade.TraceWrite) ([]cascade.TraceWritten, error)
	MoveTrace(ctx context.Context, from, to string, fn func(t *cascade.Trace) error) (cascade.Trace, error)
	DeleteTrace(ctx context.Context, id string) error
	ReplaceKernels(ctx context.Context, traceID string, ks []cascade.Kernel) error
	ReplaceKernelsFrom(ctx context.Context, traceID string, fill func(add func([]cascade.Kernel) error) error) error
}

// TestContract runs the same steps on the in-memory store the fast
// tier's tests use (testkit/memstore) and on the database (SQLite, and
// PostgreSQL when dbtest says so) and checks each against the rules the
// scanner and the post-processor rely on; the fake is only as good as its
// agreement with *db.DB.
func TestContract(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		m := memstore.New()
		contract(t, m, m.Kernels)
	})
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		contract(t, d, func(id string) []cascade.Kernel {
			p, err := d.Kernels(context.Background(), id, "", cascade.Page{First: cascade.MaxPageSize})
			if err != nil {
				t.Fatal(err)
			}
			return p.Items
		})
	})
}

func kernels(names ...string) []cascade.Kernel {
	ks := make([]cascade.Kernel, len(names))
	for i, n := range names {
		ks[i] = cascade.Kernel{KernelID: i + 1, Name: n, TraceFile: n + ".traceg", GridX: 1, GridY: 1, GridZ: 1, BlockX: 32, BlockY: 1, BlockZ: 1}
	}
	return ks
}

// names is the kernel list as "trace/seq:name ...".
func names(ks []cascade.Kernel) string {
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s/%d:%s ", k.TraceID, k.Seq, k.Name)
	}
	return strings.TrimSpace(b.String())
}

func contract(t *testing.T, s store, kernelsOf func(id string) []cascade.Kernel) {
	ctx := context.Background()
	set := func(st cascade.TraceState) func(*cascade.Trace, bool) error {
		return func(tr *cascade.Trace, _ bool) error {
			tr.State, tr.TraceGPUArch, tr.Prompts = st, "sm_90", []string{"p"}
			return nil
		}
	}

	// A read-modify-write of a trace that is not there inserts it, in
	// order.
	var sawFound bool
	var sawID string
	a, saved, err := s.UpdateTrace(ctx, "a", func(tr *cascade.Trace, found bool) error {
		sawFound, sawID = found, tr.ID
		return set(cascade.TraceUploading)(tr, found)
	})
	if err != nil || !saved || sawFound || sawID != "a" || a.Seq != 1 || a.State != cascade.TraceUploading || a.CreatedAt.IsZero() {
		t.Fatalf("insert a: %+v saved %v err %v (fn saw found %v, id %q)", a, saved, err, sawFound, sawID)
	}
	if b, _, err := s.UpdateTrace(ctx, "b", set(cascade.TraceUploading)); err != nil || b.Seq != 2 {
		t.Fatalf("insert b: seq %d, %v; want 2", b.Seq, err)
	}

	// ErrUnchanged saves nothing and is no error; another error is
	// returned and saves nothing either.
	if _, saved, err := s.UpdateTrace(ctx, "a", func(tr *cascade.Trace, _ bool) error {
		tr.State = cascade.TraceFailed
		return cascade.ErrUnchanged
	}); saved || err != nil {
		t.Fatalf("ErrUnchanged: saved %v, err %v", saved, err)
	}
	boom := errors.New("boom")
	if _, saved, err := s.UpdateTrace(ctx, "a", func(tr *cascade.Trace, _ bool) error {
		tr.State = cascade.TraceFailed
		return boom
	}); saved || !errors.Is(err, boom) {
		t.Fatalf("fn error: saved %v, err %v; want boom", saved, err)
	}
	if got, err := s.Trace(ctx, "a"); err != nil || got.State != cascade.TraceUploading {
		t.Fatalf("a after unsaved updates: %+v, %v", got, err)
	}

	// Seq and CreatedAt stay; UpdatedAt grows.
	a2, saved, err := s.UpdateTrace(ctx, "a", set(cascade.TraceProcessing))
	if err != nil || !saved || a2.Seq != a.Seq || !a2.CreatedAt.Equal(a.CreatedAt) || !a2.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("update a: %+v (before %+v), saved %v, %v", a2, a, saved, err)
	}
	if got, _ := s.Trace(ctx, "a"); got.State != cascade.TraceProcessing || !got.UpdatedAt.Equal(a2.UpdatedAt) {
		t.Fatalf("a as stored: %+v, want it as UpdateTrace returned it: %+v", got, a2)
	}

	// Kernels: replaced whole, dropped by UpdateTraceAndKernels.
	if err := s.ReplaceKernels(ctx, "a", kernels("k1", "k2")); err != nil {
		t.Fatal(err)
	}
	if got := names(kernelsOf("a")); got != "a/0:k1 a/1:k2" {
		t.Fatalf("kernels of a: %s", got)
	}
	if err := s.ReplaceKernelsFrom(ctx, "a", func(add func([]cascade.Kernel) error) error {
		if err := add(kernels("half")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("ReplaceKernelsFrom whose fill fails: %v", err)
	}
	if got := names(kernelsOf("a")); got != "a/0:k1 a/1:k2" {
		t.Fatalf("kernels of a after a failed replace: %s", got)
	}
	if err := s.ReplaceKernels(ctx, "gone", kernels("k")); err != nil {
		t.Fatalf("kernels of a trace that is not there: %v", err)
	}
	if got := names(kernelsOf("gone")); got != "" {
		t.Fatalf("kernels of a trace that is not there: %s", got)
	}
	if _, saved, err := s.UpdateTraceAndKernels(ctx, "a", func(tr *cascade.Trace, _ bool) (bool, error) {
		return true, cascade.ErrUnchanged
	}); saved || err != nil || names(kernelsOf("a")) == "" {
		t.Fatalf("drop with ErrUnchanged: saved %v, %v, kernels %q; want them kept", saved, err, names(kernelsOf("a")))
	}
	if _, saved, err := s.UpdateTraceAndKernels(ctx, "a", func(tr *cascade.Trace, _ bool) (bool, error) {
		tr.State = cascade.TraceUploading
		return true, nil
	}); !saved || err != nil || names(kernelsOf("a")) != "" {
		t.Fatalf("drop: saved %v, %v, kernels %q; want none", saved, err, names(kernelsOf("a")))
	}

	// UpdateTraces: each write as UpdateTraceAndKernels, in order, its
	// kernels with it; one write's error is that write's.
	res, err := s.UpdateTraces(ctx, []cascade.TraceWrite{
		{ID: "a", Update: func(tr *cascade.Trace, found bool) (bool, error) { return false, set(cascade.TraceReady)(tr, found) }, Kernels: kernels("x", "y", "z")},
		{ID: "b", Update: func(*cascade.Trace, bool) (bool, error) { return false, cascade.ErrUnchanged }, Kernels: kernels("never")},
		{ID: "c", Update: func(tr *cascade.Trace, found bool) (bool, error) {
			return false, set(cascade.TraceUploading)(tr, found)
		}},
		{ID: "d", Update: func(*cascade.Trace, bool) (bool, error) { return false, boom }},
	})
	if err != nil || len(res) != 4 {
		t.Fatalf("UpdateTraces: %v, %d results", err, len(res))
	}
	got := fmt.Sprintf("a %v %s %v; b %v %v; c %v seq %d; d %v %v", res[0].Saved, res[0].Trace.State, res[0].Err,
		res[1].Saved, res[1].Err, res[2].Saved, res[2].Trace.Seq, res[3].Saved, res[3].Err)
	if want := "a true READY <nil>; b false <nil>; c true seq 3; d false boom"; got != want {
		t.Fatalf("UpdateTraces:\n got %s\nwant %s", got, want)
	}
	if got := names(kernelsOf("a")) + "|" + names(kernelsOf("b")); got != "a/0:x a/1:y a/2:z|" {
		t.Fatalf("kernels after UpdateTraces: %s", got)
	}
	if _, err := s.Trace(ctx, "d"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Fatalf("d, whose write failed: %v, want NOT_FOUND", err)
	}
	if _, err := s.UpdateTraces(ctx, []cascade.TraceWrite{
		{ID: "c", Update: func(tr *cascade.Trace, _ bool) (bool, error) { tr.State = cascade.TraceFailed; return false, nil }},
		{ID: "c", Update: func(*cascade.Trace, bool) (bool, error) { return false, nil }},
	}); err == nil {
		t.Fatal("UpdateTraces with one id twice: no error")
	}
	if got, _ := s.Trace(ctx, "c"); got.State != cascade.TraceUploading {
		t.Fatalf("c after a refused batch: %s", got.State)
	}

	// MoveTrace.
	keep := func(*cascade.Trace) error { return nil }
	if _, err := s.MoveTrace(ctx, "a", "b", keep); cascade.ErrorCode(err) != cascade.ECONFLICT {
		t.Fatalf("move onto a trace: %v, want CONFLICT", err)
	}
	if _, err := s.MoveTrace(ctx, "nope", "n", keep); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Fatalf("move of no trace: %v, want NOT_FOUND", err)
	}
	if _, err := s.MoveTrace(ctx, "a", "z", func(*cascade.Trace) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("move whose fn fails: %v", err)
	}
	if _, err := s.Trace(ctx, "a"); err != nil {
		t.Fatalf("a after a failed move: %v", err)
	}
	z, err := s.MoveTrace(ctx, "a", "z", func(tr *cascade.Trace) error { tr.Warnings = []string{"moved"}; return nil })
	if err != nil || z.ID != "z" || z.Seq != 1 || fmt.Sprint(z.Warnings) != "[moved]" {
		t.Fatalf("move a to z: %+v, %v", z, err)
	}
	if _, err := s.Trace(ctx, "a"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Fatalf("a after its move: %v", err)
	}
	if got := names(kernelsOf("z")); got != "z/0:x z/1:y z/2:z" {
		t.Fatalf("kernels after the move: %s", got)
	}

	// AllTraces, oldest first; DeleteTrace, of one that is not there too.
	all, err := s.AllTraces(ctx)
	var order []string
	for _, tr := range all {
		order = append(order, fmt.Sprintf("%s:%d", tr.ID, tr.Seq))
	}
	if err != nil || strings.Join(order, " ") != "z:1 b:2 c:3" {
		t.Fatalf("AllTraces: %v, %v", order, err)
	}
	if err := s.DeleteTrace(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTrace(ctx, "z"); err != nil {
		t.Fatalf("delete of no trace: %v", err)
	}
	if got := names(kernelsOf("z")); got != "" {
		t.Fatalf("kernels of a deleted trace: %s", got)
	}

	// SaveTrace inserts with the next seq (one past the highest stored),
	// and updates keeping seq and creation time.
	n := &cascade.Trace{ID: "n", State: cascade.TraceReady, TraceGPUArch: "sm_90", Prompts: []string{}}
	if err := s.SaveTrace(ctx, n); err != nil || n.Seq != 4 {
		t.Fatalf("SaveTrace: seq %d, %v; want 4", n.Seq, err)
	}
	created := n.CreatedAt
	n.State = cascade.TraceFailed
	if err := s.SaveTrace(ctx, n); err != nil || n.Seq != 4 || !n.CreatedAt.Equal(created) {
		t.Fatalf("SaveTrace again: %+v, %v", n, err)
	}

	// What a caller gets is its own copy.
	b, _ := s.Trace(ctx, "b")
	b.Prompts[0] = "changed"
	if again, _ := s.Trace(ctx, "b"); !reflect.DeepEqual(again.Prompts, []string{"p"}) {
		t.Fatalf("prompts changed through a read: %q", again.Prompts)
	}
}
