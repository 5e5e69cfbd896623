package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestKernelCounters: a trace's kernel counters are replaced whole, read
// per kernel, go with the trace when it is moved, and with its kernels
// when they are dropped; the profiles read are kept on the trace.
func TestKernelCounters(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		tr := newTrace("prof")
		tr.Profiles = []cascade.ProfileRead{{File: "ncu.csv", Profiler: "ncu", GPU: "Quadro GV100", Launches: 3, Matched: 2, Unmatched: 1, Stats: []string{"cycles"}}}
		if err := saveWithKernels(ctx, d, tr, []cascade.Kernel{{KernelID: 1, Name: "a", TraceFile: "kernel-1.trace"}, {KernelID: 2, Name: "b", TraceFile: "kernel-2.trace"}}); err != nil {
			t.Fatal(err)
		}
		if err := d.ReplaceKernelCounters(ctx, "prof", []cascade.KernelCounter{
			{Seq: 0, Stat: "cycles", Mean: 8867, Min: 8823, Max: 8911, Count: 2},
			{Seq: 0, Stat: "dram_reads", Mean: 2512, Min: 2512, Max: 2512, Count: 2},
			{Seq: 1, Stat: "cycles", Mean: 4410, Min: 4410, Max: 4410, Count: 1},
		}); err != nil {
			t.Fatal(err)
		}
		cs, err := d.KernelCounters(ctx, "prof", 0, 1)
		if err != nil || len(cs) != 2 || cs[0].Stat != "cycles" || cs[0].Mean != 8867 || cs[0].Min != 8823 || cs[0].Max != 8911 || cs[0].Count != 2 || cs[1].Stat != "dram_reads" {
			t.Fatalf("kernel 0's counters %+v, %v", cs, err)
		}
		got, err := d.Trace(ctx, "prof")
		if err != nil || len(got.Profiles) != 1 || got.Profiles[0].Matched != 2 || got.Profiles[0].GPU != "Quadro GV100" {
			t.Fatalf("profiles %+v, %v", got.Profiles, err)
		}
		if err := d.ReplaceKernelCounters(ctx, "prof", []cascade.KernelCounter{{Seq: 1, Stat: "cycles", Mean: 1, Min: 1, Max: 1, Count: 1}}); err != nil {
			t.Fatal(err)
		}
		if cs, _ := d.KernelCounters(ctx, "prof", 0, 1); len(cs) != 0 {
			t.Fatalf("replaced, kernel 0 keeps %+v", cs)
		}
		if _, err := d.MoveTrace(ctx, "prof", "prof2", func(*cascade.Trace) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if cs, _ := d.KernelCounters(ctx, "prof2", 1, 2); len(cs) != 1 {
			t.Fatalf("moved: %+v", cs)
		}
		// More than one transaction's worth.
		var many []cascade.KernelCounter
		for i := range 12_001 {
			many = append(many, cascade.KernelCounter{Seq: i % 2, Stat: fmt.Sprintf("s%05d", i), Mean: float64(i), Min: float64(i), Max: float64(i), Count: 1})
		}
		if err := d.ReplaceKernelCounters(ctx, "prof2", many); err != nil {
			t.Fatal(err)
		}
		if cs, _ := d.KernelCounters(ctx, "prof2", 0, 1); len(cs) != 6001 || cs[6000].Stat != "s12000" {
			t.Fatalf("%d counters of kernel 0", len(cs))
		}
		// Both kernels in one read, by seq, then statistic.
		if cs, _ := d.KernelCounters(ctx, "prof2", 0, 2); len(cs) != 12_001 || cs[6000].Seq != 0 || cs[6001].Seq != 1 || cs[6001].Stat != "s00001" {
			t.Fatalf("kernels 0 and 1: %d counters", len(cs))
		}
		if err := d.DeleteTrace(ctx, "prof2"); err != nil {
			t.Fatal(err)
		}
		if cs, _ := d.KernelCounters(ctx, "prof2", 1, 2); len(cs) != 0 {
			t.Fatalf("deleted, counters stay: %+v", cs)
		}
	})
}
