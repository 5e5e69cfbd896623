package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/slurm"
)

// scancelBatch bounds the job ids given to one scancel call.
const scancelBatch = 1000

// Cancel implements [runs.Executor]: the runs' "cancel requested" lines
// in one transaction, their jobs with one scancel call per scancelBatch
// jobs, and the runs whose jobs were pending cancelled at once, in one
// more transaction; running ones end when the poller sees their jobs end.
// While Slurm does not answer, the scancel is left for the poller to send
// once it does, and that is no error. Runs over by now are left.
func (e *Executor) Cancel(ctx context.Context, rs []cascade.Run) ([]cascade.Run, error) {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	jobOf := map[string]slurm.Ref{}
	saved, _, err := e.host.UpdateRuns(ctx, ids, func(r *cascade.Run) error {
		if r.State.Final() || !r.HasJob() {
			return cascade.ErrUnchanged // a run without a job is the Manager's
		}
		jobOf[r.ID] = refOf(r.Slurm)
		if slices.ContainsFunc(r.History, func(h string) bool { return strings.Contains(h, cancelRequested) }) {
			return cascade.ErrUnchanged
		}
		r.History = append(r.History, runs.Stamp(fmt.Sprintf("%s %s", cancelRequested, r.Slurm.Ref())))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(jobOf) == 0 {
		return saved, nil
	}
	var withJob []string // runs with a job, in ids' order
	refs := make([]slurm.Ref, 0, len(jobOf))
	e.mu.Lock()
	for _, id := range ids {
		ref, ok := jobOf[id]
		if !ok {
			continue
		}
		delete(jobOf, id) // an id given twice
		refs = append(refs, ref)
		if j := e.jobs[id]; j != nil {
			j.cancelled = true
		}
		withJob = append(withJob, id)
	}
	refs = e.wholeArraysLocked(refs)
	e.mu.Unlock()
	var errs []error
	for batch := range slices.Chunk(refs, scancelBatch) {
		if err := e.scancel(ctx, batch...); errors.Is(err, slurm.ErrUnavailable) {
			return saved, nil // the poller delivers them once Slurm answers
		} else if err != nil && len(batch) == 1 {
			errs = append(errs, fmt.Errorf("cancel Slurm job %s: %w", batch[0], err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("cancel %d Slurm jobs: %w", len(batch), err))
		}
	}
	if len(errs) > 0 {
		return saved, errors.Join(errs...)
	}
	// Pending jobs that were cancelled never start.
	cancelled, _, err := e.host.UpdateRuns(ctx, withJob, cancelBeforeStart)
	if err != nil {
		return saved, err
	}
	e.mu.Lock()
	for _, r := range cancelled {
		delete(e.jobs, r.ID)
	}
	e.mu.Unlock()
	for _, r := range cancelled {
		e.log.Info("run cancelled", "run", r.ID, "job", r.Slurm.Ref())
	}
	return append(saved, cancelled...), nil
}

// wholeArraysLocked returns refs with the tasks of each job array that
// refs cancel whole — every task of it Cascade still follows and has not
// cancelled before (the segments of a cancelled sampled or split run) —
// replaced by the array:
// one scancel of the array's id, which also cancels its tasks still
// pending as one record. Tasks of an array some other task of which is
// still wanted stay tasks.
func (e *Executor) wholeArraysLocked(refs []slurm.Ref) []slurm.Ref {
	cancelled := map[slurm.Ref]bool{}
	for _, r := range refs {
		cancelled[r] = true
	}
	kept := map[slurm.JobID]bool{} // arrays with a task not cancelled
	for _, j := range e.jobs {
		if j.ref.IsTask() && !cancelled[j.ref] && !j.cancelled {
			kept[j.ref.ID] = true
		}
	}
	out := make([]slurm.Ref, 0, len(refs))
	whole := map[slurm.JobID]bool{}
	for _, r := range refs {
		switch {
		case !r.IsTask() || kept[r.ID]:
			out = append(out, r)
		case !whole[r.ID]:
			whole[r.ID] = true
			out = append(out, slurm.JobRef(r.ID))
		}
	}
	return out
}

// cancelBeforeStart records a pending run whose job was cancelled: it
// never starts.
func cancelBeforeStart(r *cascade.Run) error {
	if r.State != cascade.RunQueued {
		return cascade.ErrUnchanged
	}
	now := time.Now().UTC()
	r.State, r.FinishedAt = cascade.RunCancelled, &now
	r.Slurm.State = string(slurm.Cancelled)
	r.History = append(r.History, runs.Stamp("cancelled before it started"))
	return nil
}

// Remove implements [runs.Executor]: it stops following the run and
// cancels its job when it has one.
func (e *Executor) Remove(ctx context.Context, r cascade.Run) {
	e.mu.Lock()
	j := e.jobs[r.ID]
	delete(e.jobs, r.ID)
	delete(e.held, r.ID)
	delete(e.maybe, r.ID)
	delete(e.tasks, r.ID)
	e.mu.Unlock()
	switch {
	case j != nil:
		e.scancel(ctx, j.ref)
	case r.HasJob():
		e.scancel(ctx, refOf(r.Slurm))
	}
}

// scancel cancels jobs, or leaves them for the next poll to cancel when
// Slurm does not answer.
func (e *Executor) scancel(ctx context.Context, ids ...slurm.Ref) error {
	if len(ids) == 0 {
		return nil
	}
	err := e.c.CancelRefs(ctx, ids...)
	again := errors.Is(err, slurm.ErrUnavailable) || ctx.Err() != nil
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if again {
			e.cancels[id] = true
		} else {
			delete(e.cancels, id)
		}
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
	case again:
		e.log.Warn("scancel failed: Slurm is unavailable; trying again at the next poll", "jobs", ids, "err", err)
		e.unavailableLocked(err)
	default:
		e.log.Error("scancel refused", "jobs", ids, "err", err)
	}
	return err
}
