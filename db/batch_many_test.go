package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestUpdateTracesMany: batches bigger than one statement's share of
// rows, new traces and then all of them again with kernels.
func TestUpdateTracesMany(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		var ws []cascade.TraceWrite
		for i := range 250 {
			ws = append(ws, cascade.TraceWrite{ID: fmt.Sprintf("t-%03d", i), Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State, tr.TraceGPUArch, tr.Prompts, tr.Model = cascade.TraceProcessing, cascade.DefaultTraceGPUArch, []string{}, cascade.Ptr("m")
				return false, nil
			}})
		}
		if _, err := d.UpdateTraces(ctx, ws); err != nil {
			t.Fatal(err)
		}
		for i := range ws {
			ws[i].Kernels = []cascade.Kernel{{KernelID: 1, Name: "k", TraceFile: "kernel-1.trace"}}
		}
		if _, err := d.UpdateTraces(ctx, ws); err != nil {
			t.Fatal(err)
		}
		all, err := d.Traces(ctx, cascade.TraceFilter{State: cascade.TraceProcessing}, cascade.Page{First: cascade.DefaultPageSize, Count: true})
		if err != nil || all.Total != int64(len(ws)) {
			t.Fatalf("%d traces processing, %v", all.Total, err)
		}
		for _, id := range []string{"t-000", "t-249"} {
			if p, err := d.Kernels(ctx, id, "", cascade.Page{First: cascade.DefaultPageSize, Count: true}); err != nil || p.Total != 1 {
				t.Fatalf("%s: %d kernels, %v", id, p.Total, err)
			}
		}
	})
}
