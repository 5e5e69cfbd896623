package db_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestMigration20KeepsCounters: kernel counters stored one row a counter
// before version 20 read back the same after it, one row a kernel, by
// seq, then statistic in byte order, whatever the database's collation;
// the old table is gone, and the migrated counters are replaced, moved
// and deleted as others are.
func TestMigration20KeepsCounters(t *testing.T) {
	ctx := context.Background()
	// a: a few kernels, values of every kind; b: more kernels than the
	// migration reads at a time, seqs with gaps; orphan: of no trace row.
	var old []cascade.KernelCounter
	for _, c := range []cascade.KernelCounter{
		{Seq: 0, Stat: "cycles", Mean: 8867, Min: 8823, Max: 8911, Count: 2},
		{Seq: 0, Stat: "dram_reads", Mean: 2512.5, Min: -1e300, Max: math.MaxFloat64, Count: 3},
		{Seq: 0, Stat: "L2_hits", Mean: 1 << 60, Min: 0.1, Max: 1 << 60, Count: math.MaxInt32 + 1},
		{Seq: 0, Stat: "_ipc", Mean: -7, Min: -7.25, Max: 3, Count: 0},
		{Seq: 2, Stat: "cycles", Mean: math.Inf(1), Min: math.SmallestNonzeroFloat64, Max: math.Inf(1), Count: 1},
		{Seq: 5, Stat: "_ipc", Mean: 0, Min: 0, Max: 0, Count: 1},
	} {
		c.TraceID = "a"
		old = append(old, c)
	}
	for i := range 5000 {
		for j, s := range []string{"warp_instructions", "cycles"} {
			v := float64(i*3+j) / 4
			old = append(old, cascade.KernelCounter{TraceID: "b", Seq: i * 3, Stat: s, Mean: v, Min: v - 1, Max: v + 1, Count: i%5 + 1})
		}
	}
	old = append(old, cascade.KernelCounter{TraceID: "orphan", Seq: 7, Stat: "cycles", Mean: 1, Min: 1, Max: 1, Count: 1})
	want := map[string][]cascade.KernelCounter{}
	for _, c := range old {
		want[c.TraceID] = append(want[c.TraceID], c)
	}
	for _, cs := range want {
		slices.SortFunc(cs, func(a, b cascade.KernelCounter) int {
			if a.Seq != b.Seq {
				return a.Seq - b.Seq
			}
			return strings.Compare(a.Stat, b.Stat)
		})
	}

	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b"} {
				if err := d.SaveTrace(ctx, newTrace(id)); err != nil {
					t.Fatal(err)
				}
			}
			d.RollBackCounterRows(t)
			d.InsertOldCounters(t, old)
			d.Close()

			d, err = db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if v, err := d.SchemaVersion(ctx); err != nil || v != db.LatestSchemaVersion {
				t.Fatalf("schema version %d, %v", v, err)
			}
			if d.HasTable("kernel_counters") {
				t.Fatal("the old table of counters is left")
			}
			for id, w := range want {
				got, err := d.KernelCounters(ctx, id, 0, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, w) {
					t.Fatalf("%s after migration: %d counters, want %d\n%s", id, len(got), len(w), firstDiff(got, w))
				}
			}
			if got, err := d.KernelCounters(ctx, "b", 3, 7); err != nil || len(got) != 4 || got[0].Seq != 3 || got[3].Seq != 6 {
				t.Fatalf("b's kernels 3 to 6: %+v, %v", got, err)
			}
			if _, err := d.MoveTrace(ctx, "a", "a2", func(*cascade.Trace) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if got, _ := d.KernelCounters(ctx, "a2", 0, 6); len(got) != len(want["a"]) || got[0].TraceID != "a2" {
				t.Fatalf("moved: %+v", got)
			}
			if err := d.ReplaceKernelCounters(ctx, "b", want["a"][:1]); err != nil {
				t.Fatal(err)
			}
			if got, _ := d.KernelCounters(ctx, "b", 0, 1<<30); len(got) != 1 || got[0].Stat != "L2_hits" || got[0].TraceID != "b" {
				t.Fatalf("b replaced: %+v", got)
			}
			if err := d.DeleteTrace(ctx, "a2"); err != nil {
				t.Fatal(err)
			}
			if got, _ := d.KernelCounters(ctx, "a2", 0, 6); len(got) != 0 {
				t.Fatalf("deleted, counters stay: %+v", got)
			}
		})
	}
}

// firstDiff describes where two lists of counters first differ.
func firstDiff(got, want []cascade.KernelCounter) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	return ""
}
