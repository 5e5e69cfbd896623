package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

func testRunKernels(n int, tag string) []cascade.RunKernel {
	ks := make([]cascade.RunKernel, n)
	for i := range ks {
		id, ctx := i+1, "ctx"+tag
		ks[i] = cascade.RunKernel{KernelID: &id, Context: &ctx, Name: fmt.Sprintf("k%d%s", i, tag),
			TraceFile: fmt.Sprintf("kernel-%d.traceg", id), LaunchUID: id, SimCycles: int64(1000 + i),
			SimInstructions: int64(7 * i), IPC: float64(i) / 3, Truncated: i%5 == 4, Stats: []byte{byte(i), 1, 2, 0, 255}}
		if i%7 == 3 {
			ks[i].KernelID, ks[i].Context, ks[i].Stats = nil, nil, nil
		}
	}
	return ks
}

// TestAppendRunKernels: kernels appended in steps, with a changed tail
// rewritten, end as a full save of the same list does, on every chunk
// size; a save from the start after a restart (fewer kernels in memory
// than stored) leaves no rows of the longer list behind.
func TestAppendRunKernels(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		db.SetRunKernelChunk(t, 5)
		ctx := context.Background()
		want := testRunKernels(23, "")
		if err := d.SaveRunKernels(ctx, "full", testRunKernels(23, "")); err != nil {
			t.Fatal(err)
		}
		ks := testRunKernels(23, "")
		steps := []int{0, 3, 3, 11, 12, 23}
		for i := 1; i < len(steps); i++ {
			if err := d.AppendRunKernels(ctx, "app", steps[i-1], ks[steps[i-1]:steps[i]]); err != nil {
				t.Fatal(err)
			}
		}
		// A tail changed in memory (a kernel marked truncated) is written
		// again from there.
		stale := testRunKernels(23, "old")
		if err := d.AppendRunKernels(ctx, "tail", 0, stale[:20]); err != nil {
			t.Fatal(err)
		}
		if err := d.AppendRunKernels(ctx, "tail", 9, testRunKernels(23, "")[9:]); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"full", "app"} {
			got, err := d.RunKernels(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				want[i].RunID, want[i].Seq = id, i
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %+v, want %+v", id, got, want)
			}
		}
		got, err := d.RunKernels(ctx, "tail")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 23 || got[8].Name != "k8old" || got[9].Name != "k9" || got[22].Name != "k22" {
			t.Errorf("tail: %d kernels, %+v", len(got), got)
		}

		// After a restart the parser holds fewer kernels than are stored:
		// a save from 0 replaces them all.
		if err := d.SaveRunKernels(ctx, "app", testRunKernels(4, "new")); err != nil {
			t.Fatal(err)
		}
		got, err = d.RunKernels(ctx, "app")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || got[3].Name != "k3new" || got[3].Seq != 3 {
			t.Errorf("after restart: %+v", got)
		}
		// Saving nothing removes every kernel.
		if err := d.SaveRunKernels(ctx, "app", nil); err != nil {
			t.Fatal(err)
		}
		if got, err := d.RunKernels(ctx, "app"); err != nil || len(got) != 0 {
			t.Errorf("after empty save: %d kernels, %v", len(got), err)
		}
		if err := d.AppendRunKernels(ctx, "app", -1, nil); err == nil {
			t.Error("negative start: no error")
		}
	})
}

// TestCopyRunKernels: a run's kernels copied in the store, across chunk
// boundaries, are the original's with the copy's run id, replacing what
// the copy had; a run without kernels copies as none.
func TestCopyRunKernels(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		db.SetRunKernelChunk(t, 5)
		ctx := context.Background()
		if err := d.SaveRunKernels(ctx, "orig", testRunKernels(23, "")); err != nil {
			t.Fatal(err)
		}
		if err := d.SaveRunKernels(ctx, "copy", testRunKernels(30, "old")); err != nil {
			t.Fatal(err)
		}
		if err := d.SaveRunKernels(ctx, "other", testRunKernels(3, "other")); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyRunKernels(ctx, "orig", "copy"); err != nil {
			t.Fatal(err)
		}
		want, err := d.RunKernels(ctx, "orig")
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i].RunID = "copy"
		}
		got, err := d.RunKernels(ctx, "copy")
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 23 || !reflect.DeepEqual(got, want) {
			t.Errorf("copy has %d kernels %+v, want %d %+v", len(got), got, len(want), want)
		}
		if err := d.CopyRunKernels(ctx, "none", "other"); err != nil {
			t.Fatal(err)
		}
		if got, err := d.RunKernels(ctx, "other"); err != nil || len(got) != 0 {
			t.Errorf("a copy of no kernels left %d (%v)", len(got), err)
		}
	})
}

// TestSetRunKernelStats: the kernels given get their new statistics, by
// Seq, their other fields and the run's other kernels (and other runs')
// staying as stored.
func TestSetRunKernelStats(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		for _, id := range []string{"run", "other"} {
			if err := d.SaveRunKernels(ctx, id, testRunKernels(9, "")); err != nil {
				t.Fatal(err)
			}
		}
		set := []cascade.RunKernel{{Seq: 2, Stats: []byte{1, 9}}, {Seq: 3, Stats: []byte{2, 8, 8}}, {Seq: 7, Stats: nil}}
		if err := d.SetRunKernelStats(ctx, "run", set); err != nil {
			t.Fatal(err)
		}
		want := testRunKernels(9, "")
		for i := range want {
			want[i].RunID, want[i].Seq = "run", i
		}
		want[2].Stats, want[3].Stats, want[7].Stats = []byte{1, 9}, []byte{2, 8, 8}, nil
		got, err := d.RunKernels(ctx, "run")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("after the set:\n got %+v\nwant %+v", got, want)
		}
		other, err := d.RunKernels(ctx, "other")
		if err != nil || len(other) != 9 || !reflect.DeepEqual(other[2].Stats, testRunKernels(9, "")[2].Stats) {
			t.Errorf("the other run's kernels changed: %v %+v", err, other)
		}
	})
}
