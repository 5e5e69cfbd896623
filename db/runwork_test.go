package db_test

import (
	"context"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestRunWork: a config's last succeeded runs that ran a process and
// timed it, newest first, each with its kernels' instruction counts from
// its trace's kernel list, matched by kernel id and context; failed runs,
// untimed ones, other configs, sampled runs and reused ones are left
// out, and a kernel the list does not count is not counted.
func TestRunWork(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := d.SaveTrace(ctx, newTrace("t")); err != nil {
			t.Fatal(err)
		}
		a, b := cascade.Ptr("a"), cascade.Ptr("b")
		ks := []cascade.Kernel{
			{Seq: 0, KernelID: 1, Context: a, Name: "k", TraceFile: "a-1", Instructions: cascade.Ptr[int64](100)},
			{Seq: 1, KernelID: 1, Context: b, Name: "k", TraceFile: "b-1", Instructions: cascade.Ptr[int64](7000)},
			{Seq: 2, KernelID: 2, Context: a, Name: "k", TraceFile: "a-2", Instructions: cascade.Ptr[int64](20)},
			{Seq: 3, KernelID: 3, Context: a, Name: "k", TraceFile: "a-3"}, // not counted
		}
		if err := d.ReplaceKernels(ctx, "t", ks); err != nil {
			t.Fatal(err)
		}
		add := func(id, config string, state cascade.RunState, wall float64, kernels []cascade.Kernel, change func(r *cascade.Run)) {
			t.Helper()
			r := &cascade.Run{ID: id, TraceID: "t", SimConfig: config, State: state, Executor: "local",
				Figures: cascade.RunFigures{WallSeconds: wall}}
			if change != nil {
				change(r)
			}
			if err := d.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			rks := make([]cascade.RunKernel, len(kernels))
			for i, k := range kernels {
				rks[i] = cascade.RunKernel{KernelID: cascade.Ptr(k.KernelID), Context: k.Context, Name: k.Name, TraceFile: k.TraceFile, SimCycles: 1, SimInstructions: 12345}
			}
			if err := d.SaveRunKernels(ctx, id, rks); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := d.RunWork(ctx, "SM7_QV100", 5); err != nil || len(got) != 0 {
			t.Fatalf("no runs: %v, %v; want none", got, err)
		}
		add("full", "SM7_QV100", cascade.RunSucceeded, 10, ks, nil)
		add("seg", "SM7_QV100", cascade.RunSucceeded, 2, ks[1:3], func(r *cascade.Run) { r.KernelIDs = []int{1, 2} })
		add("failed", "SM7_QV100", cascade.RunFailed, 3, ks, nil)
		add("untimed", "SM7_QV100", cascade.RunSucceeded, 0, ks, nil)
		add("other", "SM6_TITANX", cascade.RunSucceeded, 3, ks, nil)
		add("sampled", "SM7_QV100", cascade.RunSucceeded, 4, ks[:1], func(r *cascade.Run) { r.Sampling = &cascade.SampledRun{PlanID: "p"} })
		add("reused", "SM7_QV100", cascade.RunSucceeded, 10, ks, func(r *cascade.Run) { r.SameAsID = cascade.Ptr("full") })
		add("empty", "SM7_QV100", cascade.RunSucceeded, 1, nil, nil)

		got, err := d.RunWork(ctx, "SM7_QV100", 5)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			id               string
			kernels, counted int
			instructions     int64
		}
		want := []row{{"empty", 0, 0, 0}, {"seg", 2, 2, 7020}, {"full", 4, 3, 7120}}
		if len(got) != len(want) {
			t.Fatalf("got %d runs %+v, want %v", len(got), got, want)
		}
		for i, w := range want {
			g := got[i]
			if (row{g.Run.ID, g.Kernels, g.Counted, g.Instructions}) != w {
				t.Errorf("run %d: got %s %d/%d kernels, %d instructions; want %v", i, g.Run.ID, g.Counted, g.Kernels, g.Instructions, w)
			}
		}
		if got, err := d.RunWork(ctx, "SM7_QV100", 1); err != nil || len(got) != 1 || got[0].Run.ID != "empty" {
			t.Errorf("the last 1: %+v, %v; want empty", got, err)
		}
	})
}
