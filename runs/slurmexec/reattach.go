package slurmexec

import (
	"context"
	"maps"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/slurm"
)

// Reattach implements [runs.Executor]: it follows the jobs of the runs a
// previous server submitted, by their stored ids (a job, or a job
// array's task), from the first poll on. A queued run without a job may
// have been submitted just before that server stopped: the first poll
// looks for its job by name (in squeue, then with sacct where the cluster
// keeps accounting; a segment's as a task of the job array named after
// its sampled or split run), adopts the one it finds, and hands the
// others back to be submitted. So it returns none to start now.
func (e *Executor) Reattach(_ context.Context, left []cascade.Run) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range left {
		if r.HasJob() {
			e.trackLocked(r)
			e.log.Info("reattached to Slurm job", "run", r.ID, "job", r.Slurm.Ref(), "state", r.State)
		} else if r.State == cascade.RunQueued {
			e.maybe[r.ID] = true
			if r.SampledByID != nil {
				e.tasks[r.ID] = arrayTask{parent: *r.SampledByID, task: -1}
			}
		}
	}
	return nil
}

// byName finds runs' jobs among statuses: a job by its run's name, a
// segment's also as its task of the job array named after its parent.
// Where a name has several, the newest.
type byName struct {
	jobs  map[string]slurm.Status
	tasks map[taskKey]slurm.Status
}

type taskKey struct {
	name string
	task int
}

func newByName(sts []slurm.Status) byName {
	b := byName{jobs: map[string]slurm.Status{}, tasks: map[taskKey]slurm.Status{}}
	for _, st := range sts {
		if st.Array != 0 {
			k := taskKey{st.Name, st.Task}
			if prev, ok := b.tasks[k]; !ok || st.Array > prev.Array {
				b.tasks[k] = st
			}
			continue
		}
		if prev, ok := b.jobs[st.Name]; !ok || st.ID > prev.ID {
			b.jobs[st.Name] = st
		}
	}
	return b
}

// find returns the job found of run id (t its array task, when it is a
// segment: task -1 when not known).
func (b byName) find(id string, t *arrayTask) (slurm.Status, bool) {
	if st, ok := b.jobs[JobName(id)]; ok {
		return st, true
	}
	if t != nil && t.task >= 0 {
		st, ok := b.tasks[taskKey{JobName(t.parent), t.task}]
		return st, ok
	}
	return slurm.Status{}, false
}

// resubmit settles runs whose submission Slurm did not answer: with one
// squeue call, a job found by the run's name (or a segment's task of its
// parent's array) is adopted, and the other runs are handed back to the
// Manager's queue for submission again.
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
	found := newByName(all)
	e.mu.Lock()
	held := slices.Collect(maps.Keys(e.held))
	maybe := slices.Collect(maps.Keys(e.maybe))
	tasks := maps.Clone(e.tasks)
	clear(e.held)
	clear(e.maybe)
	clear(e.tasks)
	e.mu.Unlock()
	parents := map[string][]string{}
	for id, t := range tasks {
		t.task = e.segmentTask(ctx, id, t, parents)
		tasks[id] = t
	}
	var again []string
	for _, id := range maybe {
		if st, ok := found.find(id, taskOf(tasks, id)); ok {
			e.adopt(ctx, id, st)
			continue
		}
		again = append(again, id)
	}
	// A job that ended longer ago than the controller's MinJobAge has left
	// squeue: where the cluster keeps accounting, sacct still knows it by
	// name. Submitting again without asking would run the simulation twice.
	again, err = e.accountedByName(ctx, again, tasks)
	if err != nil {
		if ctx.Err() != nil {
			return // the next start looks for them again
		}
		e.unavailable(err)
		e.mu.Lock()
		for _, id := range again {
			e.maybe[id] = true
			if t, ok := tasks[id]; ok {
				e.tasks[id] = t
			}
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

func taskOf(tasks map[string]arrayTask, id string) *arrayTask {
	if t, ok := tasks[id]; ok {
		return &t
	}
	return nil
}

// adopt records a job found by its run's name as the run's.
func (e *Executor) adopt(ctx context.Context, id string, st slurm.Status) {
	e.log.Info("found the Slurm job of a run whose submission was not recorded", "run", id, "job", st.Ref().String(), "state", st.SlurmState)
	e.record(ctx, id, st.Ref(), st.Partition, e.host.KernelTotal(ctx, id), "found its Slurm job %s, submitted before the server heard back")
}

// accountedByName adopts the jobs sacct knows by the names of runs ids
// (a segment's: its task of its parent's array), where the cluster keeps
// accounting, and returns the runs that have none; on an error, ids are
// returned with it, none adopted.
func (e *Executor) accountedByName(ctx context.Context, ids []string, tasks map[string]arrayTask) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	acct, err := e.c.AccountingEnabled(ctx)
	if err != nil || !acct {
		return ids, err
	}
	var names []string
	for _, id := range ids {
		names = append(names, JobName(id))
		if t, ok := tasks[id]; ok && !slices.Contains(names, JobName(t.parent)) {
			names = append(names, JobName(t.parent))
		}
	}
	sts, err := e.c.AccountedByName(ctx, names)
	if err != nil {
		return ids, err
	}
	found := newByName(sts)
	var none []string
	for _, id := range ids {
		if st, ok := found.find(id, taskOf(tasks, id)); ok {
			e.adopt(ctx, id, st)
			continue
		}
		none = append(none, id)
	}
	return none, nil
}
