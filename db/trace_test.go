package db_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

func newTrace(id string) *cascade.Trace {
	return &cascade.Trace{ID: id, State: cascade.TraceUploading, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}}
}

// saveWithKernels stores t and replaces its kernels with ks, which many
// tests need; the server writes a trace and its kernels separately too.
func saveWithKernels(ctx context.Context, d *db.DB, t *cascade.Trace, ks []cascade.Kernel) error {
	if err := d.SaveTrace(ctx, t); err != nil {
		return err
	}
	return d.ReplaceKernels(ctx, t.ID, ks)
}

func TestTraces(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		t.Run("SaveAndLoad", func(t *testing.T) {
			tr := newTrace("llama ünïcode run")
			tr.Model = cascade.Ptr("meta-llama/Llama-3.1-8B")
			tr.Prompts = []string{"The capital of France is", "2+2="}
			tr.Bytes = 1 << 40
			if err := d.SaveTrace(ctx, tr); err != nil {
				t.Fatal(err)
			}
			got, err := d.Trace(ctx, tr.ID)
			if err != nil {
				t.Fatal(err)
			}
			if *got.Model != *tr.Model || got.Bytes != 1<<40 || len(got.Prompts) != 2 || got.Prompts[1] != "2+2=" || got.Seq == 0 {
				t.Fatalf("got %+v", got)
			}
			created := got.CreatedAt
			tr.State, tr.Error = cascade.TraceFailed, cascade.Ptr("metadata.json: bad")
			if err := d.SaveTrace(ctx, tr); err != nil {
				t.Fatal(err)
			}
			got, _ = d.Trace(ctx, tr.ID)
			if got.State != cascade.TraceFailed || *got.Error != "metadata.json: bad" || !got.CreatedAt.Equal(created) {
				t.Fatalf("update lost: %+v", got)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := d.Trace(ctx, "nope")
			if code := cascade.ErrorCode(err); code != cascade.ENOTFOUND {
				t.Fatalf("code %q, err %v", code, err)
			}
		})
		t.Run("PagesNewestFirst", func(t *testing.T) {
			for i := range 7 {
				tr := newTrace(fmt.Sprintf("page-%d", i))
				if i%2 == 0 {
					tr.State = cascade.TraceReady
				}
				if err := d.SaveTrace(ctx, tr); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			after := ""
			for {
				p, err := d.Traces(ctx, cascade.TraceFilter{Search: "PAGE-"}, cascade.Page{First: 3, After: after, Count: true})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != 7 {
					t.Fatalf("total %d", p.Total)
				}
				for _, tr := range p.Items {
					ids = append(ids, tr.ID)
				}
				if !p.HasNext {
					break
				}
				after = cascade.Cursor(p.Items[len(p.Items)-1].Seq)
			}
			if fmt.Sprint(ids) != "[page-6 page-5 page-4 page-3 page-2 page-1 page-0]" {
				t.Fatalf("order %v", ids)
			}
			p, err := d.Traces(ctx, cascade.TraceFilter{State: cascade.TraceReady, Search: "page"}, cascade.Page{First: cascade.DefaultPageSize, Count: true})
			if err != nil || p.Total != 4 {
				t.Fatalf("ready filter: %v %v", p.Total, err)
			}
			p, err = d.Traces(ctx, cascade.TraceFilter{Search: "page"}, cascade.Page{First: 0, Count: true})
			if err != nil || p.Total != 7 || len(p.Items) != 0 || !p.HasNext {
				t.Fatalf("first 0: total %d, %d items, hasNext %v, %v; want 7, none, true", p.Total, len(p.Items), p.HasNext, err)
			}
		})
		t.Run("ErrBadCursor", func(t *testing.T) {
			_, err := d.Traces(ctx, cascade.TraceFilter{}, cascade.Page{After: "garbage"})
			if cascade.ErrorCode(err) != cascade.EINVALID {
				t.Fatalf("err %v", err)
			}
		})
		t.Run("KernelsReplacedAndPaged", func(t *testing.T) {
			tr := newTrace("kernels")
			ks := make([]cascade.Kernel, 1234)
			for i := range ks {
				ks[i] = cascade.Kernel{KernelID: i + 1, Name: "_Z3fooi", TraceFile: fmt.Sprintf("kernel-%d.trace", i+1), GridX: i, GridY: 1, GridZ: 1, BlockX: 256, BlockY: 1, BlockZ: 1}
			}
			if err := saveWithKernels(ctx, d, tr, ks); err != nil {
				t.Fatal(err)
			}
			if err := saveWithKernels(ctx, d, tr, ks[:1000]); err != nil {
				t.Fatal(err)
			}
			seen, after := 0, ""
			for {
				p, err := d.Kernels(ctx, tr.ID, "", cascade.Page{First: 300, After: after, Count: true})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != 1000 {
					t.Fatalf("total %d", p.Total)
				}
				for _, k := range p.Items {
					if k.KernelID != seen+1 || k.GridX != seen {
						t.Fatalf("kernel %d out of order: %+v", seen, k)
					}
					seen++
				}
				if !p.HasNext {
					break
				}
				after = cascade.Cursor(int64(p.Items[len(p.Items)-1].Seq))
			}
			if seen != 1000 {
				t.Fatalf("saw %d", seen)
			}
			if err := d.DeleteTrace(ctx, tr.ID); err != nil {
				t.Fatal(err)
			}
			if p, _ := d.Kernels(ctx, tr.ID, "", cascade.Page{First: cascade.DefaultPageSize, Count: true}); p.Total != 0 {
				t.Fatalf("kernels survive delete: %d", p.Total)
			}
		})
		t.Run("UpdateDropsKernels", func(t *testing.T) {
			tr := newTrace("drop")
			if err := saveWithKernels(ctx, d, tr, []cascade.Kernel{{KernelID: 1, Name: "k", TraceFile: "kernel-1.trace"}}); err != nil {
				t.Fatal(err)
			}
			for _, drop := range []bool{false, true} {
				_, saved, err := d.UpdateTraceAndKernels(ctx, tr.ID, func(t *cascade.Trace, found bool) (bool, error) {
					t.State = cascade.TraceUploading
					return drop, nil
				})
				p, _ := d.Kernels(ctx, tr.ID, "", cascade.Page{First: cascade.DefaultPageSize, Count: true})
				if err != nil || !saved || (p.Total == 0) != drop {
					t.Fatalf("drop %v: saved %v, err %v, %d kernels left", drop, saved, err, p.Total)
				}
			}
		})
		t.Run("MoveTrace", func(t *testing.T) {
			tr := newTrace("move-from")
			if err := saveWithKernels(ctx, d, tr, []cascade.Kernel{{KernelID: 7, Name: "k", TraceFile: "kernel-7.trace"}}); err != nil {
				t.Fatal(err)
			}
			if err := d.SaveTrace(ctx, newTrace("move-taken")); err != nil {
				t.Fatal(err)
			}
			noop := func(*cascade.Trace) error { return nil }
			if _, err := d.MoveTrace(ctx, "move-from", "move-taken", noop); cascade.ErrorCode(err) != cascade.ECONFLICT {
				t.Fatalf("onto a taken id: %v", err)
			}
			if _, err := d.MoveTrace(ctx, "move-nope", "move-to", noop); cascade.ErrorCode(err) != cascade.ENOTFOUND {
				t.Fatalf("an unknown trace: %v", err)
			}
			moved, err := d.MoveTrace(ctx, "move-from", "move-to", func(t *cascade.Trace) error { t.Warnings = []string{"moved"}; return nil })
			if err != nil || moved.ID != "move-to" || moved.Seq != tr.Seq || len(moved.Warnings) != 1 {
				t.Fatalf("moved %+v, %v", moved, err)
			}
			if _, err := d.Trace(ctx, "move-from"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
				t.Fatalf("the old id is still there: %v", err)
			}
			if p, _ := d.Kernels(ctx, "move-to", "", cascade.Page{First: cascade.DefaultPageSize, Count: true}); p.Total != 1 || p.Items[0].KernelID != 7 {
				t.Fatalf("kernels did not move: %+v", p)
			}
		})
		t.Run("ConcurrentWriters", func(t *testing.T) {
			// SQLite's deferred transactions would fail with SQLITE_BUSY here.
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := range 40 {
				wg.Go(func() {
					errs <- d.SaveTrace(ctx, newTrace(fmt.Sprintf("conc-%d", i%10)))
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	})
}

// TestTracesByID: the traces of a list of ids, each once and without the
// missing ones, in one query.
func TestTracesByID(t *testing.T) {
	ctx := context.Background()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			sql := &sqlCounter{}
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: t.TempDir(), Logger: slog.New(sql)})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, id := range []string{"by-id-a", "by-id-b", "by-id-c"} {
				if err := d.SaveTrace(ctx, newTrace(id)); err != nil {
					t.Fatal(err)
				}
			}
			// Counted: the statements run for this context only, not the
			// database's own background work (the collector of retired kernel
			// sets runs once as the database opens, beside the test).
			ts, err := d.TracesByID(sql.counted(ctx), []string{"by-id-c", "missing", "by-id-a", "by-id-c"})
			if err != nil {
				t.Fatal(err)
			}
			if n := sql.n.Load(); n != 1 {
				t.Errorf("%d statements, want 1", n)
			}
			var got []string
			for _, tr := range ts {
				if tr.Seq == 0 || tr.State != cascade.TraceUploading {
					t.Errorf("trace %s not read whole: %+v", tr.ID, tr)
				}
				got = append(got, tr.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, []string{"by-id-a", "by-id-c"}) {
				t.Fatalf("got %v, want by-id-a and by-id-c", got)
			}
			if ts, err := d.TracesByID(ctx, nil); err != nil || len(ts) != 0 {
				t.Fatalf("no ids: %v, %v", ts, err)
			}
		})
	}
}

// sqlCounter is a slog handler that counts the SQL statements the
// database runs (db.LevelSQL records) for a context made by counted, and
// drops the rest.
type sqlCounter struct{ n atomic.Int64 }

type countedKey struct{}

// counted returns ctx marked: the statements run for it are counted.
func (c *sqlCounter) counted(ctx context.Context) context.Context {
	return context.WithValue(ctx, countedKey{}, c)
}

func (c *sqlCounter) Enabled(_ context.Context, l slog.Level) bool { return l == db.LevelSQL }
func (c *sqlCounter) WithAttrs([]slog.Attr) slog.Handler           { return c }
func (c *sqlCounter) WithGroup(string) slog.Handler                { return c }
func (c *sqlCounter) Handle(ctx context.Context, _ slog.Record) error {
	if ctx.Value(countedKey{}) == c {
		c.n.Add(1)
	}
	return nil
}

func TestMigrationsIdempotent(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		d, err := db.Open(context.Background(), db.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.SchemaVersion(context.Background())
		if err != nil || v != db.LatestSchemaVersion {
			t.Fatalf("version %d, %v", v, err)
		}
		d.Close()
	}
}

// TestKernelSearch: search matches the mangled name and the demangled one,
// case-insensitively, and LIKE's wildcards match only themselves.
func TestKernelSearch(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		tr := newTrace("search")
		rms := "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii"
		ks := []cascade.Kernel{
			{KernelID: 1, Name: rms, DemangledName: "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)"},
			{KernelID: 2, Name: "_Z6vecAddPdS_S_i", DemangledName: "vecAdd(double*, double*, double*, int)"},
			{KernelID: 3, Name: "add_100%_kernel"},
		}
		if err := saveWithKernels(ctx, d, tr, ks); err != nil {
			t.Fatal(err)
		}
		for search, want := range map[string][]int{
			"":                     {1, 2, 3},
			"rms_norm":             {1},
			"vllm::rms_norm":       {1},
			"c10::BFLOAT16":        {1},
			"double*":              {2},
			"15rms_norm":           {1},
			"100%":                 {3},
			"%_k":                  {3},
			"_z%":                  {},
			"rms_norm_kernel<c10:": {1},
			"nothing":              {},
		} {
			p, err := d.Kernels(ctx, tr.ID, search, cascade.Page{First: cascade.DefaultPageSize, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, k := range p.Items {
				got = append(got, k.KernelID)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) || int(p.Total) != len(want) {
				t.Errorf("search %q: kernels %v (total %d), want %v", search, got, p.Total, want)
			}
		}
	})
}
