package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// A row's UpdatedAt never goes back, even when the clock does: the web UI
// keeps the newer of a query's answer and an event by it, so a change
// stamped earlier than the one before it would be dropped as stale.
func TestUpdatedAtNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	ahead := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond) // the clock, before it was stepped back
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		later := func(what string, got time.Time, table, id string) {
			t.Helper()
			if !got.After(ahead) {
				t.Errorf("%s: UpdatedAt %v, not after the stored %v", what, got, ahead)
			}
			var stored time.Time
			switch table {
			case "traces":
				tr, err := d.Trace(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				stored = tr.UpdatedAt
			case "runs":
				r, err := d.Run(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				stored = r.UpdatedAt
			}
			if !stored.After(ahead) {
				t.Errorf("%s: stored UpdatedAt %v, not after %v", what, stored, ahead)
			}
		}
		step := func(table, id string) {
			t.Helper()
			if err := d.SetUpdatedAt(ctx, table, id, ahead); err != nil {
				t.Fatal(err)
			}
		}

		tr, _, err := d.UpdateTrace(ctx, "clock", func(tr *cascade.Trace, found bool) error {
			tr.State, tr.TraceGPUArch, tr.Prompts = cascade.TraceUploading, cascade.DefaultTraceGPUArch, []string{}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		step("traces", "clock")
		got, _, err := d.UpdateTrace(ctx, "clock", func(tr *cascade.Trace, found bool) error {
			tr.State = cascade.TraceProcessing
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		later("UpdateTrace", got.UpdatedAt, "traces", "clock")

		step("traces", "clock")
		res, err := d.UpdateTraces(ctx, []cascade.TraceWrite{{ID: "clock", Update: func(tr *cascade.Trace, found bool) (bool, error) {
			tr.State = cascade.TraceReady
			return false, nil
		}}})
		if err != nil {
			t.Fatal(err)
		}
		later("UpdateTraces", res[0].Trace.UpdatedAt, "traces", "clock")

		step("traces", "clock")
		tr.State = cascade.TraceFailed
		if err := d.SaveTrace(ctx, &tr); err != nil {
			t.Fatal(err)
		}
		later("SaveTrace", tr.UpdatedAt, "traces", "clock")

		if err := d.CreateRun(ctx, newRun("clock-run", "clock")); err != nil {
			t.Fatal(err)
		}
		step("runs", "clock-run")
		r, _, err := d.UpdateRun(ctx, "clock-run", func(r *cascade.Run) error {
			r.State = cascade.RunRunning
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		later("UpdateRun", r.UpdatedAt, "runs", "clock-run")

		step("runs", "clock-run")
		saved, _, err := d.UpdateRuns(ctx, []string{"clock-run"}, func(r *cascade.Run) error {
			r.KernelsDone++
			return nil
		})
		if err != nil || len(saved) != 1 {
			t.Fatalf("UpdateRuns = %v, %v", saved, err)
		}
		later("UpdateRuns", saved[0].UpdatedAt, "runs", "clock-run")
	})
}
