package db_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

func TestCountsByState(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		if err := d.Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		if n, err := d.TraceCounts(ctx); err != nil || len(n) != 0 {
			t.Fatalf("TraceCounts of an empty database = %v, %v", n, err)
		}
		traces := map[cascade.TraceState]int64{cascade.TraceUploading: 1, cascade.TraceReady: 3, cascade.TraceFailed: 2}
		for s, k := range traces {
			for i := range k {
				tr := newTrace(fmt.Sprintf("%s-%d", s, i))
				tr.State = s
				if err := d.SaveTrace(ctx, tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		runs := map[cascade.RunState]int64{cascade.RunQueued: 2, cascade.RunRunning: 1, cascade.RunCancelled: 1}
		for s, k := range runs {
			for i := range k {
				r := newRun(fmt.Sprintf("%s-%d", s, i), "READY-0")
				r.State = s
				if err := d.CreateRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n, err := d.TraceCounts(ctx); err != nil || !maps.Equal(n, traces) {
			t.Errorf("TraceCounts = %v, %v; want %v", n, err, traces)
		}
		if n, err := d.RunCounts(ctx); err != nil || !maps.Equal(n, runs) {
			t.Errorf("RunCounts = %v, %v; want %v", n, err, runs)
		}
		d.Close()
		if err := d.Ping(ctx); err == nil {
			t.Error("Ping of a closed database: no error")
		}
	})
}
