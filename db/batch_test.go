package db_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestUpdateTraces: many traces' read-modify-writes in one transaction,
// each as UpdateTraceAndKernels does it, with kernel lists replaced or
// dropped, and one trace's error leaving only that trace alone.
func TestUpdateTraces(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		names := func(id string) []string {
			t.Helper()
			p, err := d.Kernels(ctx, id, "", cascade.Page{First: 100, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			var ns []string
			for i, k := range p.Items {
				if k.Seq != i || k.TraceID != id {
					t.Fatalf("%s: kernel %d is %+v", id, i, k)
				}
				ns = append(ns, k.Name)
			}
			if p.Total != int64(len(ns)) {
				t.Fatalf("%s: total %d of %d kernels", id, p.Total, len(ns))
			}
			return ns
		}
		old := []cascade.Kernel{{KernelID: 1, Name: "old", TraceFile: "kernel-1.trace"}}
		for _, id := range []string{"replaced", "dropped", "same", "broken"} {
			if err := saveWithKernels(ctx, d, newTrace(id), old); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := d.Trace(ctx, "broken")
		bad := errors.New("bad")
		ks := []cascade.Kernel{{KernelID: 7, Name: "a", TraceFile: "kernel-7.trace"}, {KernelID: 8, Name: "b", TraceFile: "kernel-8.trace"}}
		ws := []cascade.TraceWrite{
			{ID: "new1", Update: func(tr *cascade.Trace, found bool) (bool, error) {
				if found || tr.ID != "new1" {
					t.Errorf("new1: found %v, %+v", found, tr)
				}
				tr.State, tr.TraceGPUArch, tr.Prompts = cascade.TraceProcessing, cascade.DefaultTraceGPUArch, []string{}
				return false, nil
			}},
			{ID: "replaced", Kernels: ks, Update: func(tr *cascade.Trace, found bool) (bool, error) {
				if !found || tr.State != cascade.TraceUploading {
					t.Errorf("replaced: found %v, %+v", found, tr)
				}
				tr.State, tr.KernelCount = cascade.TraceReady, 2
				return false, nil
			}},
			{ID: "dropped", Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State = cascade.TraceUploading
				return true, nil
			}},
			{ID: "same", Kernels: ks, Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State = cascade.TraceFailed
				return true, cascade.ErrUnchanged
			}},
			{ID: "broken", Kernels: ks, Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State = cascade.TraceFailed
				return true, bad
			}},
			{ID: "absent", Update: func(tr *cascade.Trace, found bool) (bool, error) {
				return false, cascade.ErrUnchanged
			}},
			{ID: "new2", Kernels: ks[:1], Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State, tr.TraceGPUArch, tr.Prompts = cascade.TraceReady, cascade.DefaultTraceGPUArch, []string{}
				return false, nil
			}},
		}
		res, err := d.UpdateTraces(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		var saved []string
		for i, r := range res {
			if r.Saved {
				saved = append(saved, ws[i].ID)
				stored, err := d.Trace(ctx, ws[i].ID)
				if err != nil || stored.State != r.Trace.State || stored.Seq != r.Trace.Seq || stored.Seq == 0 {
					t.Errorf("%s: stored %+v, %v; result %+v", ws[i].ID, stored, err, r.Trace)
				}
			}
		}
		if want := []string{"new1", "replaced", "dropped", "new2"}; !slices.Equal(saved, want) {
			t.Fatalf("saved %v, want %v", saved, want)
		}
		if !errors.Is(res[4].Err, bad) || res[3].Err != nil {
			t.Fatalf("errors: same %v, broken %v", res[3].Err, res[4].Err)
		}
		if res[6].Trace.Seq != res[0].Trace.Seq+1 || res[0].Trace.Seq <= before.Seq {
			t.Fatalf("new traces' seqs %d and %d after %d", res[0].Trace.Seq, res[6].Trace.Seq, before.Seq)
		}
		if _, err := d.Trace(ctx, "absent"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("absent: %v", err)
		}
		if after, _ := d.Trace(ctx, "broken"); after.State != before.State {
			t.Fatalf("broken: stored %+v", after)
		}
		for id, want := range map[string][]string{"replaced": {"a", "b"}, "dropped": nil, "same": {"old"}, "broken": {"old"}, "new1": nil, "new2": {"a"}} {
			if got := names(id); !slices.Equal(got, want) {
				t.Errorf("%s: kernels %v, want %v", id, got, want)
			}
		}
		if _, err := d.UpdateTraces(ctx, []cascade.TraceWrite{ws[0], ws[0]}); err == nil {
			t.Fatal("a trace written twice: no error")
		}
	})
}
