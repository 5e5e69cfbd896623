package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// The write paths postproc, scanner and runs build on: a read-modify-write
// inside one write transaction, which ErrUnchanged or any other error
// leaves without a trace, and which concurrent writers cannot interleave.

func TestUpdateTrace(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		t.Run("NotFoundInserts", func(t *testing.T) {
			got, saved, err := d.UpdateTrace(ctx, "new", func(tr *cascade.Trace, found bool) error {
				if found || tr.ID != "new" || tr.Seq != 0 || tr.State != "" {
					t.Errorf("fn got found %v, %+v", found, tr)
				}
				tr.State, tr.TraceGPUArch, tr.Prompts = cascade.TraceUploading, "sm_80", []string{"p"}
				return nil
			})
			if err != nil || !saved || got.Seq == 0 || got.CreatedAt.IsZero() {
				t.Fatalf("UpdateTrace = %+v, %v, %v", got, saved, err)
			}
			stored, err := d.Trace(ctx, "new")
			if err != nil || stored.Seq != got.Seq || stored.TraceGPUArch != "sm_80" || !slices.Equal(stored.Prompts, []string{"p"}) {
				t.Fatalf("stored %+v, %v", stored, err)
			}
		})
		t.Run("NotFoundErrUnchangedInsertsNothing", func(t *testing.T) {
			_, saved, err := d.UpdateTrace(ctx, "absent", func(tr *cascade.Trace, found bool) error {
				tr.State = cascade.TraceUploading
				return cascade.ErrUnchanged
			})
			if err != nil || saved {
				t.Fatalf("UpdateTrace = %v, %v", saved, err)
			}
			if _, err := d.Trace(ctx, "absent"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
				t.Fatalf("Trace: %v", err)
			}
		})
		t.Run("ReadModifyWrite", func(t *testing.T) {
			tr := newTrace("rmw")
			tr.Model, tr.Error, tr.KernelCount, tr.HasRealTiming = cascade.Ptr("m"), cascade.Ptr("bad"), 5, true
			tr.Warnings = []string{"w"}
			if err := d.SaveTrace(ctx, tr); err != nil {
				t.Fatal(err)
			}
			before, _ := d.Trace(ctx, "rmw")
			got, saved, err := d.UpdateTrace(ctx, "rmw", func(tr *cascade.Trace, found bool) error {
				if !found || cascade.Deref(tr.Model) != "m" || tr.KernelCount != 5 || !tr.HasRealTiming {
					t.Errorf("fn got found %v, %+v", found, tr)
				}
				// Zero values and nils are written too, not skipped.
				tr.State, tr.Error, tr.Model, tr.KernelCount, tr.HasRealTiming = cascade.TraceReady, nil, nil, 0, false
				tr.Warnings = []string{}
				tr.Seq = 999 // not the caller's to change
				return nil
			})
			if err != nil || !saved {
				t.Fatalf("UpdateTrace = %v, %v", saved, err)
			}
			stored, _ := d.Trace(ctx, "rmw")
			if stored.State != cascade.TraceReady || stored.Error != nil || stored.Model != nil || stored.KernelCount != 0 || stored.HasRealTiming || len(stored.Warnings) != 0 {
				t.Fatalf("stored %+v", stored)
			}
			if stored.Seq != before.Seq || got.Seq != before.Seq || !stored.CreatedAt.Equal(before.CreatedAt) || stored.UpdatedAt.Before(before.UpdatedAt) {
				t.Fatalf("seq %d (returned %d), created %v, updated %v; before %d, %v, %v",
					stored.Seq, got.Seq, stored.CreatedAt, stored.UpdatedAt, before.Seq, before.CreatedAt, before.UpdatedAt)
			}
		})
		t.Run("ErrUnchangedLeavesStored", func(t *testing.T) {
			if err := d.SaveTrace(ctx, newTrace("unchanged")); err != nil {
				t.Fatal(err)
			}
			before, _ := d.Trace(ctx, "unchanged")
			_, saved, err := d.UpdateTrace(ctx, "unchanged", func(tr *cascade.Trace, found bool) error {
				tr.State, tr.KernelCount = cascade.TraceFailed, 7
				return cascade.ErrUnchanged
			})
			if err != nil || saved {
				t.Fatalf("UpdateTrace = %v, %v", saved, err)
			}
			if after, _ := d.Trace(ctx, "unchanged"); after.State != cascade.TraceUploading || after.KernelCount != 0 || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Fatalf("stored %+v", after)
			}
		})
		t.Run("ErrorRollsBack", func(t *testing.T) {
			if err := d.SaveTrace(ctx, newTrace("conflict")); err != nil {
				t.Fatal(err)
			}
			_, saved, err := d.UpdateTrace(ctx, "conflict", func(tr *cascade.Trace, found bool) error {
				tr.State = cascade.TraceFailed
				return cascade.Errorf(cascade.ECONFLICT, "trace %q is uploading", tr.ID)
			})
			if saved || cascade.ErrorCode(err) != cascade.ECONFLICT {
				t.Fatalf("UpdateTrace = %v, %v", saved, err)
			}
			if after, _ := d.Trace(ctx, "conflict"); after.State != cascade.TraceUploading {
				t.Fatalf("stored %+v", after)
			}
		})
		t.Run("ConcurrentUpdatesLoseNothing", func(t *testing.T) {
			// Every writer starts before the trace exists: one inserts it,
			// the others update what the one before them committed.
			const writers = 40
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for i := range writers {
				wg.Go(func() {
					_, _, err := d.UpdateTrace(ctx, "contended", func(tr *cascade.Trace, found bool) error {
						if !found {
							tr.State, tr.TraceGPUArch = cascade.TraceUploading, cascade.DefaultTraceGPUArch
						}
						tr.KernelCount++
						tr.Warnings = append(tr.Warnings, fmt.Sprintf("w%02d", i))
						return nil
					})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			got, err := d.Trace(ctx, "contended")
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got.Warnings)
			if got.KernelCount != writers || len(slices.Compact(got.Warnings)) != writers {
				t.Fatalf("kernel count %d, %d distinct warnings of %d writers", got.KernelCount, len(slices.Compact(got.Warnings)), writers)
			}
		})
	})
}

func newRun(id, traceID string) *cascade.Run {
	return &cascade.Run{ID: id, TraceID: traceID, SimConfig: "SM90_H100", State: cascade.RunQueued, Executor: "local", History: []string{}}
}

func TestCreateRun(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		t.Run("SeqInCreationOrder", func(t *testing.T) {
			var seqs []int64
			for i := range 3 {
				r := newRun(fmt.Sprintf("seq-%d", i), "t")
				r.KernelIDs, r.Label = []int{3, 1}, cascade.Ptr("label")
				if err := d.CreateRun(ctx, r); err != nil {
					t.Fatal(err)
				}
				if r.CreatedAt.IsZero() || r.UpdatedAt.IsZero() {
					t.Fatalf("timestamps not set: %+v", r)
				}
				seqs = append(seqs, r.Seq)
			}
			if !slices.Equal(seqs, []int64{1, 2, 3}) {
				t.Fatalf("seqs %v", seqs)
			}
			stored, err := d.Run(ctx, "seq-1")
			if err != nil || stored.Seq != 2 || !slices.Equal(stored.KernelIDs, []int{3, 1}) || cascade.Deref(stored.Label) != "label" || stored.State != cascade.RunQueued {
				t.Fatalf("stored %+v, %v", stored, err)
			}
			queued, err := d.RunsInState(ctx, cascade.RunQueued)
			if err != nil || len(queued) != 3 || queued[0].ID != "seq-0" || queued[2].ID != "seq-2" {
				t.Fatalf("RunsInState = %v, %v", queued, err)
			}
		})
		t.Run("DuplicateID", func(t *testing.T) {
			first := newRun("dup", "t1")
			if err := d.CreateRun(ctx, first); err != nil {
				t.Fatal(err)
			}
			if err := d.CreateRun(ctx, newRun("dup", "t2")); err == nil {
				t.Fatal("second run with the same id created")
			}
			if stored, _ := d.Run(ctx, "dup"); stored.TraceID != "t1" || stored.Seq != first.Seq {
				t.Fatalf("stored %+v", stored)
			}
		})
		t.Run("Concurrent", func(t *testing.T) {
			const n = 30
			var wg sync.WaitGroup
			var mu sync.Mutex
			var seqs []int64
			for i := range n {
				wg.Go(func() {
					r := newRun(fmt.Sprintf("conc-%d", i), "conc")
					if err := d.CreateRun(ctx, r); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seqs = append(seqs, r.Seq)
					mu.Unlock()
				})
			}
			wg.Wait()
			slices.Sort(seqs)
			if len(slices.Compact(seqs)) != n {
				t.Fatalf("%d distinct seqs of %d runs: %v", len(slices.Compact(seqs)), n, seqs)
			}
			p, err := d.Runs(ctx, cascade.RunFilter{TraceID: "conc"}, cascade.Page{First: 100, Count: true})
			if err != nil || p.Total != n {
				t.Fatalf("Runs = %d, %v", p.Total, err)
			}
		})
	})
}

func TestUpdateRun(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		t.Run("NotFound", func(t *testing.T) {
			called := false
			_, saved, err := d.UpdateRun(ctx, "nope", func(r *cascade.Run) error { called = true; return nil })
			if saved || called || cascade.ErrorCode(err) != cascade.ENOTFOUND {
				t.Fatalf("UpdateRun = %v, %v; fn called %v", saved, err, called)
			}
			if _, err := d.Run(ctx, "nope"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
				t.Fatalf("Run: %v", err)
			}
		})
		t.Run("TimesToTheMicrosecond", func(t *testing.T) {
			// As PostgreSQL keeps them, and as createdAt is: SQLite kept
			// a start's and an end's nanoseconds.
			r := newRun("us", "t")
			if err := d.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 12, 7, 12, 0, 0, 123456789, time.UTC)
			got, _, err := d.UpdateRun(ctx, "us", func(r *cascade.Run) error {
				r.StartedAt, r.FinishedAt = &at, &at
				return nil
			})
			want := at.Truncate(time.Microsecond)
			stored, _ := d.Run(ctx, "us")
			for _, r := range []cascade.Run{got, stored} {
				if err != nil || r.StartedAt == nil || !r.StartedAt.Equal(want) || r.FinishedAt == nil || !r.FinishedAt.Equal(want) {
					t.Fatalf("started %v, finished %v (%v); want %v", r.StartedAt, r.FinishedAt, err, want)
				}
			}
		})
		t.Run("ReadModifyWrite", func(t *testing.T) {
			r := newRun("rmw", "t")
			r.Label, r.Error, r.KernelIDs, r.KernelsDone, r.KernelsTotal = cascade.Ptr("l"), cascade.Ptr("old error"), []int{1, 2}, 5, 9
			r.History = []string{"first"}
			if err := d.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			before, _ := d.Run(ctx, "rmw")
			got, saved, err := d.UpdateRun(ctx, "rmw", func(r *cascade.Run) error {
				if r.KernelsDone != 5 || cascade.Deref(r.Error) != "old error" || !slices.Equal(r.History, []string{"first"}) {
					t.Errorf("fn got %+v", r)
				}
				r.State, r.Error, r.Label, r.KernelIDs, r.KernelsDone = cascade.RunRunning, nil, nil, nil, 0
				r.History = append(r.History, "second")
				return nil
			})
			if err != nil || !saved || got.State != cascade.RunRunning {
				t.Fatalf("UpdateRun = %+v, %v, %v", got, saved, err)
			}
			stored, _ := d.Run(ctx, "rmw")
			if stored.State != cascade.RunRunning || stored.Error != nil || stored.Label != nil || len(stored.KernelIDs) != 0 ||
				stored.KernelsDone != 0 || stored.KernelsTotal != 9 || !slices.Equal(stored.History, []string{"first", "second"}) {
				t.Fatalf("stored %+v", stored)
			}
			if stored.Seq != before.Seq || !stored.CreatedAt.Equal(before.CreatedAt) || stored.UpdatedAt.Before(before.UpdatedAt) {
				t.Fatalf("seq %d, created %v, updated %v; before %d, %v, %v", stored.Seq, stored.CreatedAt, stored.UpdatedAt, before.Seq, before.CreatedAt, before.UpdatedAt)
			}
		})
		t.Run("SlurmJob", func(t *testing.T) {
			if err := d.CreateRun(ctx, newRun("slurm", "t")); err != nil {
				t.Fatal(err)
			}
			if stored, _ := d.Run(ctx, "slurm"); stored.Slurm != (cascade.SlurmJob{}) {
				t.Fatalf("a new run's Slurm job: %+v", stored.Slurm)
			}
			want := cascade.SlurmJob{JobID: cascade.Ptr(int64(1) << 40), Partition: "gpu", Node: "n[01-02]", State: "PENDING", Reason: "Priority"}
			if _, _, err := d.UpdateRun(ctx, "slurm", func(r *cascade.Run) error { r.Slurm = want; return nil }); err != nil {
				t.Fatal(err)
			}
			stored, err := d.Run(ctx, "slurm")
			if err != nil || stored.Slurm.JobID == nil || *stored.Slurm.JobID != *want.JobID ||
				stored.Slurm.Partition != "gpu" || stored.Slurm.Node != "n[01-02]" || stored.Slurm.State != "PENDING" || stored.Slurm.Reason != "Priority" {
				t.Fatalf("stored %+v, %v", stored.Slurm, err)
			}
		})
		t.Run("ErrUnchangedLeavesStored", func(t *testing.T) {
			if err := d.CreateRun(ctx, newRun("unchanged", "t")); err != nil {
				t.Fatal(err)
			}
			before, _ := d.Run(ctx, "unchanged")
			got, saved, err := d.UpdateRun(ctx, "unchanged", func(r *cascade.Run) error { return cascade.ErrUnchanged })
			if err != nil || saved || got.ID != "unchanged" || got.State != cascade.RunQueued {
				t.Fatalf("UpdateRun = %+v, %v, %v", got, saved, err)
			}
			if after, _ := d.Run(ctx, "unchanged"); !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Fatalf("updated at %v, was %v", after.UpdatedAt, before.UpdatedAt)
			}
		})
		t.Run("ErrorRollsBack", func(t *testing.T) {
			if err := d.CreateRun(ctx, newRun("conflict", "t")); err != nil {
				t.Fatal(err)
			}
			sentinel := errors.New("stop")
			_, saved, err := d.UpdateRun(ctx, "conflict", func(r *cascade.Run) error {
				r.State = cascade.RunFailed
				return fmt.Errorf("wrapped: %w", sentinel)
			})
			if saved || !errors.Is(err, sentinel) {
				t.Fatalf("UpdateRun = %v, %v", saved, err)
			}
			if after, _ := d.Run(ctx, "conflict"); after.State != cascade.RunQueued {
				t.Fatalf("stored %+v", after)
			}
		})
		t.Run("ConcurrentUpdatesLoseNothing", func(t *testing.T) {
			if err := d.CreateRun(ctx, newRun("contended", "t")); err != nil {
				t.Fatal(err)
			}
			const writers = 40
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() {
					_, _, err := d.UpdateRun(ctx, "contended", func(r *cascade.Run) error {
						r.KernelsDone++
						r.History = append(r.History, fmt.Sprintf("h%02d", i))
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			got, err := d.Run(ctx, "contended")
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got.History)
			if got.KernelsDone != writers || len(slices.Compact(got.History)) != writers {
				t.Fatalf("kernels done %d, %d distinct history entries of %d writers", got.KernelsDone, len(slices.Compact(got.History)), writers)
			}
		})
	})
}

// TestUpdateTraceAndKernels: the scanner's start-over write drops a
// trace's kernels in the transaction that changes it, and nothing else
// does: ErrUnchanged or an error after asking to drop keeps them.
func TestUpdateTraceAndKernels(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		kernelCount := func(id string) int64 {
			t.Helper()
			p, err := d.Kernels(ctx, id, "", cascade.Page{First: cascade.DefaultPageSize, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			return p.Total
		}
		if err := saveWithKernels(ctx, d, newTrace("kept"), []cascade.Kernel{{KernelID: 1, Name: "k", TraceFile: "kernel-1.trace"}, {KernelID: 2, Name: "k", TraceFile: "kernel-2.trace"}}); err != nil {
			t.Fatal(err)
		}
		for _, stop := range []error{cascade.ErrUnchanged, errors.New("disk full")} {
			_, saved, err := d.UpdateTraceAndKernels(ctx, "kept", func(tr *cascade.Trace, found bool) (bool, error) {
				tr.State = cascade.TraceFailed
				return true, stop
			})
			if saved || (stop == cascade.ErrUnchanged) != (err == nil) {
				t.Fatalf("%v: UpdateTraceAndKernels = %v, %v", stop, saved, err)
			}
			if n := kernelCount("kept"); n != 2 {
				t.Fatalf("%v: %d kernels left of 2", stop, n)
			}
			if tr, _ := d.Trace(ctx, "kept"); tr.State != cascade.TraceUploading {
				t.Fatalf("%v: stored %+v", stop, tr)
			}
		}
		got, saved, err := d.UpdateTraceAndKernels(ctx, "kept", func(tr *cascade.Trace, found bool) (bool, error) {
			tr.State, tr.MetadataSum = cascade.TraceUploading, ""
			tr.Warnings = []string{}
			return true, nil
		})
		if err != nil || !saved || got.Seq == 0 || kernelCount("kept") != 0 {
			t.Fatalf("drop: %+v, %v, %v; %d kernels", got, saved, err, kernelCount("kept"))
		}
		// Not found: fn fills in a new trace, which is inserted.
		got, saved, err = d.UpdateTraceAndKernels(ctx, "new", func(tr *cascade.Trace, found bool) (bool, error) {
			if found || tr.ID != "new" {
				t.Errorf("fn got found %v, %+v", found, tr)
			}
			tr.State, tr.TraceGPUArch, tr.Prompts = cascade.TraceUploading, cascade.DefaultTraceGPUArch, []string{}
			return true, nil
		})
		if err != nil || !saved || got.Seq <= 1 {
			t.Fatalf("insert: %+v, %v, %v", got, saved, err)
		}
	})
}

// TestReplaceKernelsFrom: the post-processor's write of a ready trace's
// kernels, batch by batch in one transaction: they are numbered in the
// order added, and a fill that fails half-way leaves the old list.
func TestReplaceKernelsFrom(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		batch := func(first, n int) []cascade.Kernel {
			ks := make([]cascade.Kernel, n)
			for i := range ks {
				ks[i] = cascade.Kernel{KernelID: first + i, Name: "k", TraceFile: fmt.Sprintf("kernel-%d.trace", first+i)}
			}
			return ks
		}
		if err := saveWithKernels(ctx, d, newTrace("t"), batch(100, 3)); err != nil {
			t.Fatal(err)
		}
		ids := func() []int {
			t.Helper()
			p, err := d.Kernels(ctx, "t", "", cascade.Page{First: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int
			for i, k := range p.Items {
				if k.Seq != i {
					t.Fatalf("kernel %d has seq %d", i, k.Seq)
				}
				ids = append(ids, k.KernelID)
			}
			return ids
		}
		bad := errors.New("stats_ctx_0x2:7: want 12 columns")
		err := d.ReplaceKernelsFrom(ctx, "t", func(add func([]cascade.Kernel) error) error {
			if err := add(batch(1, 600)); err != nil {
				return err
			}
			return bad
		})
		if !errors.Is(err, bad) {
			t.Fatalf("failed fill: %v", err)
		}
		if got := ids(); !slices.Equal(got, []int{100, 101, 102}) {
			t.Fatalf("after a failed fill: kernels %v, want the old ones", got)
		}
		err = d.ReplaceKernelsFrom(ctx, "t", func(add func([]cascade.Kernel) error) error {
			for _, b := range [][]cascade.Kernel{batch(1, 600), batch(601, 1), batch(602, 99)} {
				if err := add(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := ids()
		if len(got) != 700 || got[0] != 1 || got[600] != 601 || got[699] != 700 {
			t.Fatalf("%d kernels %v...", len(got), got[:min(len(got), 5)])
		}
	})
}

func TestUpdateRuns(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		for _, id := range []string{"many-1", "many-2", "many-3"} {
			if err := d.CreateRun(ctx, newRun(id, "many")); err != nil {
				t.Fatal(err)
			}
		}
		t.Run("OneTransaction", func(t *testing.T) {
			before := d.WriteTransactions()
			var called []string
			saved, missing, err := d.UpdateRuns(ctx, []string{"many-1", "gone", "many-2", "many-3", "many-1"}, func(r *cascade.Run) error {
				called = append(called, r.ID)
				if r.ID == "many-2" {
					return cascade.ErrUnchanged
				}
				r.Error = cascade.Ptr("reason " + r.ID)
				return nil
			})
			if err != nil || len(saved) != 2 || saved[0].ID != "many-1" || saved[1].ID != "many-3" || !slices.Equal(missing, []string{"gone"}) {
				t.Fatalf("UpdateRuns = %v, missing %v, %v", saved, missing, err)
			}
			if !slices.Equal(called, []string{"many-1", "many-2", "many-3"}) {
				t.Fatalf("fn called for %v", called)
			}
			if n := d.WriteTransactions() - before; n != 1 {
				t.Fatalf("%d write transactions, want 1", n)
			}
			for id, want := range map[string]string{"many-1": "reason many-1", "many-2": "", "many-3": "reason many-3"} {
				r, err := d.Run(ctx, id)
				if err != nil || cascade.Deref(r.Error) != want {
					t.Fatalf("%s: error %q, %v; want %q", id, cascade.Deref(r.Error), err, want)
				}
			}
		})
		t.Run("ErrorRollsBack", func(t *testing.T) {
			boom := errors.New("boom")
			_, _, err := d.UpdateRuns(ctx, []string{"many-2", "many-3"}, func(r *cascade.Run) error {
				if r.ID == "many-3" {
					return boom
				}
				r.Error = cascade.Ptr("changed")
				return nil
			})
			if !errors.Is(err, boom) {
				t.Fatalf("UpdateRuns: %v", err)
			}
			if r, _ := d.Run(ctx, "many-2"); r.Error != nil {
				t.Fatalf("many-2 changed: %q", *r.Error)
			}
		})
	})
}
