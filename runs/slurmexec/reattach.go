package slurmexec

import (
	"context"
	"maps"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/slurm"
)

// Reattach implements [runs.Executor]: it follows the jobs of the runs a
// previous server submitted, by their stored ids, from the first poll on.
// A queued run without a job may have been submitted just before that
// server stopped: the first poll looks for its job by name (in squeue,
// then with sacct where the cluster keeps accounting), adopts the one it
// finds, and hands the others back to be submitted. So it returns none to
// start now.
func (e *Executor) Reattach(_ context.Context, left []cascade.Run) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range left {
		if r.HasJob() {
			e.trackLocked(r)
			e.log.Info("reattached to Slurm job", "run", r.ID, "job", *r.Slurm.JobID, "state", r.State)
		} else if r.State == cascade.RunQueued {
			e.maybe[r.ID] = true
		}
	}
	return nil
}

// resubmit settles runs whose submission Slurm did not answer: with one
// squeue call, a job found by the run's name is adopted, and the other
// runs are handed back to the Manager's queue for submission again.
func (e *Executor) resubmit(ctx context.Context) {
	all, err := e.c.Queue(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		e.unavailable(err)
		return
	}
	e.available()
	byName := make(map[string]slurm.Status, len(all))
	for _, st := range all {
		byName[st.Name] = st
	}
	e.mu.Lock()
	held := slices.Collect(maps.Keys(e.held))
	maybe := slices.Collect(maps.Keys(e.maybe))
	clear(e.held)
	clear(e.maybe)
	e.mu.Unlock()
	var again []string
	for _, id := range maybe {
		if st, ok := byName[JobName(id)]; ok {
			e.adopt(ctx, id, st)
			continue
		}
		again = append(again, id)
	}
	// A job that ended longer ago than the controller's MinJobAge has left
	// squeue: where the cluster keeps accounting, sacct still knows it by
	// name. Submitting again without asking would run the simulation twice.
	again, err = e.accountedByName(ctx, again)
	if err != nil {
		if ctx.Err() != nil {
			return // the next start looks for them again
		}
		e.unavailable(err)
		e.mu.Lock()
		for _, id := range again {
			e.maybe[id] = true
		}
		for _, id := range held {
			e.held[id] = true
		}
		e.mu.Unlock()
		return
	}
	again = append(again, held...)
	if err := e.host.Enqueue(ctx, again); err != nil {
		e.log.Error("queue runs again for submission", "err", err)
		e.mu.Lock()
		for _, id := range again {
			e.held[id] = true
		}
		e.mu.Unlock()
	}
}

// adopt records a job found by its run's name as the run's.
func (e *Executor) adopt(ctx context.Context, id string, st slurm.Status) {
	e.log.Info("found the Slurm job of a run whose submission was not recorded", "run", id, "job", st.ID, "state", st.SlurmState)
	e.record(ctx, id, st.ID, st.Partition, e.host.KernelTotal(ctx, id), "found its Slurm job %d, submitted before the server heard back")
}

// accountedByName adopts the jobs sacct knows by the names of runs ids,
// where the cluster keeps accounting, and returns the runs that have
// none; on an error, ids are returned with it, none adopted.
func (e *Executor) accountedByName(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	acct, err := e.c.AccountingEnabled(ctx)
	if err != nil || !acct {
		return ids, err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = JobName(id)
	}
	sts, err := e.c.AccountedByName(ctx, names)
	if err != nil {
		return ids, err
	}
	// The newest job of a name, should there be several.
	byName := map[string]slurm.Status{}
	for _, st := range sts {
		if prev, ok := byName[st.Name]; !ok || st.ID > prev.ID {
			byName[st.Name] = st
		}
	}
	var none []string
	for _, id := range ids {
		if st, ok := byName[JobName(id)]; ok {
			e.adopt(ctx, id, st)
			continue
		}
		none = append(none, id)
	}
	return none, nil
}
