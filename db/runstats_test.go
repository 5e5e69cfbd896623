package db_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestRunStatisticsAndFigures: a run's counters, failure class and own
// figures, and its kernels' encoded statistics, come back as saved.
func TestRunStatisticsAndFigures(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		r := &cascade.Run{ID: "r1", TraceID: "t", SimConfig: "SM7_QV100", State: cascade.RunFailed, Executor: "local",
			StatCounters: []cascade.StatCounter{{Name: "cycles", Kind: "aggregate", Unit: "cycles"}, {Name: "ipc", Kind: "kernel", Unit: "insts/cycle"}},
			FailureClass: cascade.FailureDeadlock,
			Figures: cascade.RunFigures{CoreClockMHz: 1132, WallSeconds: 12.5, PeakRSSBytes: 1 << 30,
				SimulatorBuild: "Accel-Sim [build x]", SimulatorSum: "s1", ConfigSum: "c1", TraceSum: "t1"},
		}
		if err := d.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		stats := []byte{1, 2, 3, 0, 255}
		ks := []cascade.RunKernel{{Name: "k", TraceFile: "kernel-1.traceg", SimCycles: 8823, Stats: stats}, {Name: "k2", TraceFile: "kernel-2.traceg"}}
		if err := d.SaveRunKernels(ctx, "r1", ks); err != nil {
			t.Fatal(err)
		}
		got, err := d.Run(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.StatCounters) != 2 || got.StatCounters[1] != r.StatCounters[1] || got.FailureClass != cascade.FailureDeadlock || got.Figures != r.Figures {
			t.Errorf("run: %+v", got)
		}
		upd, saved, err := d.UpdateRun(ctx, "r1", func(r *cascade.Run) error {
			r.Figures.PeakRSSBytes, r.FailureClass = 42, cascade.FailureOutOfMemory
			return nil
		})
		if err != nil || !saved {
			t.Fatal(saved, err)
		}
		if got, _ := d.Run(ctx, "r1"); got.Figures.PeakRSSBytes != 42 || got.FailureClass != cascade.FailureOutOfMemory || got.Figures.ConfigSum != "c1" || upd.Figures != got.Figures {
			t.Errorf("after UpdateRun: %+v", got)
		}
		kk, err := d.RunKernels(ctx, "r1")
		if err != nil || len(kk) != 2 {
			t.Fatalf("kernels: %v, %v", kk, err)
		}
		if !bytes.Equal(kk[0].Stats, stats) || kk[1].Stats != nil {
			t.Errorf("stats: %v, %v", kk[0].Stats, kk[1].Stats)
		}
	})
}
