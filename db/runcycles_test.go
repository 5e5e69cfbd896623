package db_test

import (
	"context"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestMigration16FillsInRunCycles: runs that succeeded before version 16
// get their total simulated cycles, the sum of their stored kernels';
// runs that did not succeed keep none. On SQLite and, with
// CASCADE_TEST_POSTGRES_DSN set, PostgreSQL.
func TestMigration16FillsInRunCycles(t *testing.T) {
	ctx := context.Background()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			kernels := map[string][]int64{
				"ok":      {1000, 2500, 1},
				"empty":   nil,
				"failed":  {700, 800},
				"running": {40},
				"sampled": {300, 300, 301},
			}
			states := map[string]cascade.RunState{"ok": cascade.RunSucceeded, "empty": cascade.RunSucceeded,
				"failed": cascade.RunFailed, "running": cascade.RunRunning, "sampled": cascade.RunSucceeded}
			for _, id := range []string{"ok", "empty", "failed", "running", "sampled"} {
				r := cascade.Run{ID: id, TraceID: "t", SimConfig: "SM90_H100", State: states[id], Executor: "local"}
				if id == "sampled" {
					r.Sampling = &cascade.SampledRun{PlanID: "p"}
				}
				if err := d.CreateRun(ctx, &r); err != nil {
					t.Fatal(err)
				}
				ks := make([]cascade.RunKernel, len(kernels[id]))
				for i, c := range kernels[id] {
					ks[i] = cascade.RunKernel{Name: "k", TraceFile: "kernel-1.traceg", SimCycles: c}
				}
				if err := d.SaveRunKernels(ctx, id, ks); err != nil {
					t.Fatal(err)
				}
			}
			d.RollBackRunCycles(t)
			d.Close()

			d, err = db.Open(ctx, db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if v, err := d.SchemaVersion(ctx); err != nil || v != db.LatestSchemaVersion {
				t.Fatalf("schema version %d, %v", v, err)
			}
			want := map[string]int64{"ok": 3501, "empty": 0, "failed": 0, "running": 0, "sampled": 901}
			for id, w := range want {
				r, err := d.Run(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if r.Figures.SimCycles != w || r.State != states[id] {
					t.Errorf("%s after migration: %s, %d cycles; want %d", id, r.State, r.Figures.SimCycles, w)
				}
			}
			// The column is the run's: recorded and read back like its other figures.
			r, _, err := d.UpdateRun(ctx, "running", func(r *cascade.Run) error {
				r.State, r.Figures.SimCycles = cascade.RunSucceeded, 42
				return nil
			})
			if err != nil || r.Figures.SimCycles != 42 {
				t.Fatalf("update: %+v, %v", r.Figures, err)
			}
			if r, err := d.Run(ctx, "running"); err != nil || r.Figures.SimCycles != 42 {
				t.Fatalf("read back: %+v, %v", r.Figures, err)
			}
		})
	}
}
