package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

func sweepRuns(prefix string, n int) []cascade.Run {
	rs := make([]cascade.Run, n)
	for i := range rs {
		rs[i] = cascade.Run{
			ID: fmt.Sprintf("%s%04d", prefix, i), TraceID: fmt.Sprintf("t%d", i%7), SimConfig: fmt.Sprintf("C%d", i/7),
			State: cascade.RunQueued, Executor: "local", History: []string{},
		}
	}
	return rs
}

// TestCreateSweep: a sweep and its runs are stored in one transaction,
// the runs numbered after those there are in the order given, listed,
// counted and filtered by sweep; a sweep one of whose runs cannot be
// stored leaves nothing behind.
func TestCreateSweep(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		lone := cascade.Run{ID: "lone", TraceID: "t0", SimConfig: "C0", State: cascade.RunQueued, Executor: "local"}
		if err := d.CreateRun(ctx, &lone); err != nil {
			t.Fatal(err)
		}
		const n = 63 // not a multiple of the batch
		s := cascade.Sweep{ID: "s1", TraceIDs: []string{"t0", "t1"}, SimConfigs: []string{"C0"}, Label: cascade.Ptr("first"), Executor: "local"}
		rs := sweepRuns("a", n)
		if err := d.CreateSweep(ctx, &s, rs); err != nil {
			t.Fatal(err)
		}
		if s.Seq != 1 || s.RunCount != n || s.CreatedAt.IsZero() {
			t.Fatalf("sweep after create: %+v", s)
		}
		for i, r := range rs {
			if r.Seq != lone.Seq+1+int64(i) || cascade.Deref(r.SweepID) != "s1" {
				t.Fatalf("run %d: seq %d sweep %v", i, r.Seq, r.SweepID)
			}
		}
		got, err := d.Sweep(ctx, "s1")
		if err != nil || got.RunCount != n || cascade.Deref(got.Label) != "first" || len(got.TraceIDs) != 2 || got.SimConfigs[0] != "C0" {
			t.Fatalf("Sweep = %+v, %v", got, err)
		}
		if _, err := d.Sweep(ctx, "nope"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("Sweep(nope): %v", err)
		}
		stored, err := d.SweepRuns(ctx, "s1")
		if err != nil || len(stored) != n || stored[0].ID != "a0000" || stored[n-1].ID != fmt.Sprintf("a%04d", n-1) {
			t.Fatalf("SweepRuns: %d runs, %v", len(stored), err)
		}
		page, err := d.Runs(ctx, cascade.RunFilter{SweepID: "s1"}, cascade.Page{First: 10, Count: true})
		if err != nil || page.Total != n || len(page.Items) != 10 || page.Items[0].ID != fmt.Sprintf("a%04d", n-1) {
			t.Fatalf("Runs of sweep: total %d, %d items, %v", page.Total, len(page.Items), err)
		}
		if r, err := d.Run(ctx, "lone"); err != nil || r.SweepID != nil {
			t.Fatalf("lone run: %+v, %v", r, err)
		}

		// A run that cannot be stored (its id is taken) refuses them all.
		bad := sweepRuns("b", 40)
		bad[30].ID = "a0005"
		s2 := cascade.Sweep{ID: "s2", TraceIDs: []string{"t0"}, SimConfigs: []string{"C0"}, Executor: "local"}
		if err := d.CreateSweep(ctx, &s2, bad); err == nil {
			t.Fatal("CreateSweep with a taken run id: no error")
		}
		if _, err := d.Sweep(ctx, "s2"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("sweep of the failed create: %v", err)
		}
		if _, err := d.Run(ctx, "b0000"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("a run of the failed create: %v", err)
		}

		s3 := cascade.Sweep{ID: "s3", TraceIDs: []string{"t0"}, SimConfigs: []string{"C0"}, Executor: "local"}
		if err := d.CreateSweep(ctx, &s3, sweepRuns("c", 3)); err != nil {
			t.Fatal(err)
		}
		sw, err := d.Sweeps(ctx, cascade.Page{First: cascade.DefaultPageSize, Count: true})
		if err != nil || sw.Total != 2 || len(sw.Items) != 2 || sw.Items[0].ID != "s3" || sw.Items[1].ID != "s1" {
			t.Fatalf("Sweeps = %+v, %v", sw, err)
		}

		// Progress counts by state; cancelling the queued ones leaves the
		// others as they are.
		now := time.Now().UTC()
		for id, st := range map[string]cascade.RunState{"a0001": cascade.RunRunning, "a0002": cascade.RunSucceeded, "a0003": cascade.RunFailed} {
			if _, _, err := d.UpdateRun(ctx, id, func(r *cascade.Run) error { r.State = st; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		last, _, err := d.UpdateRun(ctx, "a0004", func(r *cascade.Run) error { r.Slurm.JobID = cascade.Ptr(int64(7)); return nil })
		if err != nil {
			t.Fatal(err)
		}
		p, err := d.SweepProgress(ctx, "s1")
		want := cascade.SweepProgress{Total: n, Queued: n - 3, Running: 1, Succeeded: 1, Failed: 1}
		// Stamped with the latest change of its runs, the one just made.
		if err != nil || p.UpdatedAt == nil || !p.UpdatedAt.Equal(last.UpdatedAt) {
			t.Fatalf("SweepProgress = %+v, %v; want it stamped %v", p, err, last.UpdatedAt)
		}
		if p.UpdatedAt = nil; p != want {
			t.Fatalf("SweepProgress = %+v; want %+v", p, want)
		}
		cancelled, err := d.CancelQueuedSweepRuns(ctx, "s1", "cancelled with its sweep")
		if err != nil || len(cancelled) != n-4 {
			t.Fatalf("CancelQueuedSweepRuns: %d runs, %v", len(cancelled), err)
		}
		r, err := d.Run(ctx, "a0010")
		if err != nil || r.State != cascade.RunCancelled || r.FinishedAt == nil || r.FinishedAt.Before(now.Add(-time.Minute)) ||
			len(r.History) != 1 || r.History[0] != "cancelled with its sweep" {
			t.Fatalf("a cancelled run: %+v, %v", r, err)
		}
		if r, _ := d.Run(ctx, "a0004"); r.State != cascade.RunQueued {
			t.Fatalf("the queued run with a Slurm job: %s", r.State)
		}
		if p, _ := d.SweepProgress(ctx, "s3"); p.Queued != 3 || p.UpdatedAt == nil || !p.UpdatedAt.Before(last.UpdatedAt) {
			t.Fatalf("another sweep's runs: %+v", p)
		}
	})
}

// BenchmarkCreateSweep stores a sweep of 3,600 runs (300 traces × 12
// configs) in its one write transaction, on SQLite and, with
// CASCADE_TEST_POSTGRES_DSN set, PostgreSQL: ns/op is how long a launch
// holds the database's writer.
//
//	go test ./db -run '^$' -bench CreateSweep -benchtime 10x
func BenchmarkCreateSweep(b *testing.B) {
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			d, err := db.Open(context.Background(), db.Config{URL: u, DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			i := 0
			for b.Loop() {
				s := cascade.Sweep{ID: fmt.Sprintf("s%d", i), TraceIDs: []string{"t"}, SimConfigs: []string{"C"}, Executor: "local"}
				if err := d.CreateSweep(context.Background(), &s, sweepRuns(fmt.Sprintf("s%d-", i), 3600)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/sweep")
		})
	}
}
