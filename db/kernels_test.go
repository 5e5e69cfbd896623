package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestMigration7KeepsKernels: kernels stored before version 7 are each
// trace's kernel set after it, in order and counted; kernels of no trace
// are dropped; new lists replace the migrated ones, which are deleted.
func TestMigration7KeepsKernels(t *testing.T) {
	ctx := context.Background()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"a": 3, "b": 2, "none": 0}
			for _, id := range []string{"a", "b", "none"} {
				if err := d.SaveTrace(ctx, &cascade.Trace{ID: id, State: cascade.TraceReady, Prompts: []string{}}); err != nil {
					t.Fatal(err)
				}
			}
			d.RollBackTo6(t)
			for id, n := range map[string]int{"a": 3, "b": 2, "orphan": 4} {
				for i := range n {
					d.InsertOldKernel(t, id, i, fmt.Sprintf("%s-k%d", id, i), int64(100+i))
				}
			}
			d.Close()

			d, err = db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if v, err := d.SchemaVersion(ctx); err != nil || v != db.LatestSchemaVersion {
				t.Fatalf("schema version %d, %v", v, err)
			}
			for id, n := range want {
				p, err := d.Kernels(ctx, id, "", cascade.Page{First: cascade.DefaultPageSize, Count: true})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != int64(n) || len(p.Items) != n {
					t.Fatalf("%s after migration: total %d, %d kernels; want %d", id, p.Total, len(p.Items), n)
				}
				for i, k := range p.Items {
					if k.TraceID != id || k.Seq != i || k.KernelID != i+1 || k.Name != fmt.Sprintf("%s-k%d", id, i) || cascade.Deref(k.Instructions) != int64(100+i) {
						t.Fatalf("%s kernel %d after migration: %+v", id, i, k)
					}
				}
			}
			if rows, sets := d.KernelRows(t); rows != 5 || sets != 2 {
				t.Fatalf("%d kernel rows in %d sets after migration, want 5 in 2: the orphans dropped", rows, sets)
			}
			if err := d.ReplaceKernels(ctx, "a", []cascade.Kernel{{KernelID: 9, Name: "new", TraceFile: "kernel-9.trace"}}); err != nil {
				t.Fatal(err)
			}
			p, err := d.Kernels(ctx, "a", "", cascade.Page{First: cascade.DefaultPageSize, Count: true})
			if err != nil || p.Total != 1 || len(p.Items) != 1 || p.Items[0].Name != "new" {
				t.Fatalf("a replaced: %+v, %v", p, err)
			}
			testkit.Eventually(t, 10*time.Second, "the migrated set of a deleted", func() bool {
				rows, sets := d.KernelRows(t)
				return rows == 3 && sets == 2
			})
		})
	}
}

// kernelsOf returns every kernel of a trace and its total count.
func kernelsOf(t *testing.T, d *db.DB, id string) ([]cascade.Kernel, int64) {
	t.Helper()
	p, err := d.Kernels(context.Background(), id, "", cascade.Page{First: cascade.MaxPageSize, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items, p.Total
}

func namedKernels(prefix string, n int) []cascade.Kernel {
	ks := make([]cascade.Kernel, n)
	for i := range ks {
		ks[i] = cascade.Kernel{KernelID: i + 1, Name: fmt.Sprintf("%s-%d", prefix, i), TraceFile: "kernel-1.trace"}
	}
	return ks
}

// checkList fails unless the trace's kernels are n of prefix, whole and in
// order, and counted so.
func checkList(t *testing.T, d *db.DB, id, prefix string, n int) {
	t.Helper()
	ks, total := kernelsOf(t, d, id)
	if len(ks) != n || total != int64(n) {
		t.Fatalf("%s: %d kernels, total %d; want the %d of %q", id, len(ks), total, n, prefix)
	}
	for i, k := range ks {
		if k.Seq != i || k.Name != fmt.Sprintf("%s-%d", prefix, i) {
			t.Fatalf("%s: kernel %d is %+v; want %s-%d", id, i, k, prefix, i)
		}
	}
}

// TestIngestInChunksBesideOtherWrites: a kernel list bigger than a chunk
// goes in chunk by chunk, each committed on its own, while readers still
// see the old list whole and other traces' writes go through (on SQLite,
// a writer holding its one write transaction for the whole ingest would
// block them for good). The swap shows the new list whole, and the old
// set is deleted.
func TestIngestInChunksBesideOtherWrites(t *testing.T) {
	ctx := context.Background()
	db.SetChunkRows(t, 50)
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		for _, id := range []string{"big", "other"} {
			if err := d.SaveTrace(ctx, newTrace(id)); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.ReplaceKernels(ctx, "big", namedKernels("old", 30)); err != nil {
			t.Fatal(err)
		}
		checkList(t, d, "big", "old", 30)
		newList := namedKernels("new", 420)
		err := d.ReplaceKernelsFrom(ctx, "big", func(add func([]cascade.Kernel) error) error {
			for i := 0; i < len(newList); i += 70 {
				if err := add(append([]cascade.Kernel(nil), newList[i:i+70]...)); err != nil {
					return err
				}
				if i == 140 {
					// 210 added: at least three chunks of 50 are on their way.
					testkit.Eventually(t, 10*time.Second, "chunks committed mid-ingest", func() bool {
						rows, _ := d.KernelRows(t)
						return rows >= 30+150
					})
					checkList(t, d, "big", "old", 30)
					tr := newTrace("other")
					tr.State = cascade.TraceReady
					if err := d.SaveTrace(ctx, tr); err != nil {
						return err
					}
					if err := d.ReplaceKernels(ctx, "other", namedKernels("other", 3)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkList(t, d, "big", "new", 420)
		checkList(t, d, "other", "other", 3)
		if tr, err := d.Trace(ctx, "other"); err != nil || tr.State != cascade.TraceReady {
			t.Fatalf("other: %+v, %v", tr, err)
		}
		testkit.Eventually(t, 10*time.Second, "the old set deleted", func() bool {
			rows, sets := d.KernelRows(t)
			return rows == 423 && sets == 2
		})
	})
}

// TestFailedIngestKeepsTheOldList: an ingest whose reading fails midway
// leaves the trace's kernels as they were, and what it wrote is deleted;
// kernel sets of deleted traces and of dropped lists go too.
func TestFailedIngestKeepsTheOldList(t *testing.T) {
	ctx := context.Background()
	db.SetChunkRows(t, 50)
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		for _, id := range []string{"t", "gone", "dropped"} {
			if err := d.SaveTrace(ctx, newTrace(id)); err != nil {
				t.Fatal(err)
			}
			if err := d.ReplaceKernels(ctx, id, namedKernels("old", 120)); err != nil {
				t.Fatal(err)
			}
		}
		bad := fmt.Errorf("stats_ctx_0x1:301: unreadable")
		err := d.ReplaceKernelsFrom(ctx, "t", func(add func([]cascade.Kernel) error) error {
			if err := add(namedKernels("new", 300)); err != nil {
				return err
			}
			return bad
		})
		if err != bad {
			t.Fatalf("ReplaceKernelsFrom: %v, want %v", err, bad)
		}
		checkList(t, d, "t", "old", 120)
		if err := d.DeleteTrace(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		_, _, err = d.UpdateTraceAndKernels(ctx, "dropped", func(tr *cascade.Trace, found bool) (bool, error) {
			tr.State = cascade.TraceUploading
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkList(t, d, "dropped", "", 0)
		testkit.Eventually(t, 10*time.Second, "unused kernel sets deleted", func() bool {
			rows, sets := d.KernelRows(t)
			return rows == 120 && sets == 1
		})
	})
}

// TestKernelColumnsRoundTrip: every column of a kernel reads back as it
// was written, NULLs, untraced launches and text beyond ASCII included, through the one
// transaction of a small list and through the chunks of a big one (the
// bulk paths bind or encode each column by hand).
func TestKernelColumnsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db.SetChunkRows(t, 50)
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		if err := d.SaveTrace(ctx, newTrace("t")); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{3, 120} {
			want := make([]cascade.Kernel, n)
			for i := range want {
				k := cascade.Kernel{
					KernelID: 1 << 20 * i, Name: fmt.Sprintf("_Z3f%di", i), DemangledName: fmt.Sprintf("f%d(int) — ü", i),
					TraceFile: fmt.Sprintf("kernel-%d-ctx_0x2.trace.xz", i), GridX: 2147483647 - i, GridY: 65535, GridZ: i % 7,
					BlockX: 1024, BlockY: i % 3, BlockZ: 64, Instructions: cascade.Ptr(int64(4294967295 - i)),
					Untraced: i%4 == 1,
				}
				if i%2 == 0 {
					k.Context = cascade.Ptr(fmt.Sprintf("0x%x", i))
				}
				if i%3 == 0 {
					k.Instructions, k.DemangledName = nil, ""
				}
				want[i] = k
			}
			if err := d.ReplaceKernels(ctx, "t", append([]cascade.Kernel(nil), want...)); err != nil {
				t.Fatal(err)
			}
			got, total := kernelsOf(t, d, "t")
			if total != int64(n) || len(got) != n {
				t.Fatalf("%d kernels read back, total %d; want %d", len(got), total, n)
			}
			for i := range want {
				want[i].TraceID, want[i].Seq = "t", i
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("kernel %d of %d:\n got %+v\nwant %+v", i, n, got[i], want[i])
				}
			}
		}
	})
}
