package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/internal/testutil"
)

// TestMigration7KeepsKernels: kernels stored before version 7 are each
// trace's kernel set after it, in order and counted; kernels of no trace
// are dropped; new lists replace the migrated ones, which are deleted.
func TestMigration7KeepsKernels(t *testing.T) {
	ctx := context.Background()
	for name, u := range testutil.DatabaseURLs(t) {
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
			if v, err := d.SchemaVersion(ctx); err != nil || v != 7 {
				t.Fatalf("schema version %d, %v", v, err)
			}
			for id, n := range want {
				p, err := d.Kernels(ctx, id, "", db.Page{Count: true})
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
			p, err := d.Kernels(ctx, "a", "", db.Page{Count: true})
			if err != nil || p.Total != 1 || len(p.Items) != 1 || p.Items[0].Name != "new" {
				t.Fatalf("a replaced: %+v, %v", p, err)
			}
			testutil.Eventually(t, 10*time.Second, "the migrated set of a deleted", func() bool {
				rows, sets := d.KernelRows(t)
				return rows == 3 && sets == 2
			})
		})
	}
}
