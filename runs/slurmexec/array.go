package slurmexec

import (
	"context"
	"errors"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/slurm"
)

var _ runs.ArrayExecutor = (*Executor)(nil)

// arrayTask is the job array task a segment's job would be, should its
// sbatch have queued the array unheard: the array is named after the
// segments' sampled or split run (JobName of parent), task is the
// segment's place among its segments, -1 until read (after a restart).
type arrayTask struct {
	parent string
	task   int
}

// StartArray implements [runs.ArrayExecutor]: the segments' jobs, one job
// array of one task each (task i runs the parent's segment i), written as
// one script into the parent's directory and submitted with one sbatch
// call, as Start does a job. Each segment records the array's job id and
// its task; from then on each task is polled, followed, cancelled and
// reattached to as a job is. While Slurm does not answer the segments are
// held, and handed back (together again) once it does.
func (e *Executor) StartArray(ctx context.Context, a runs.Array) {
	ids := make([]string, len(a.Jobs))
	for i, job := range a.Jobs {
		ids[i] = job.Run.ID
	}
	e.mu.Lock()
	down := !e.status.Healthy
	if down {
		for _, id := range ids {
			e.held[id] = true // handed back once Slurm answers
		}
	}
	e.mu.Unlock()
	if down {
		return
	}
	if a = e.startBeyond(ctx, a); len(a.Jobs) == 0 {
		return
	}
	ids = ids[:0]
	for _, job := range a.Jobs {
		ids = append(ids, job.Run.ID)
	}
	failAll := func(msg string) {
		for _, id := range ids {
			e.host.Finish(ctx, id, runs.End{State: cascade.RunFailed, Error: msg})
		}
	}
	opts, err := ConfigOptions(a.Jobs[0].Config) // the segments share it
	if err != nil {
		failAll("Slurm job options: " + err.Error())
		return
	}
	opts = e.cfg.Slurm.Options.Merge(opts)
	aj := slurm.ArrayJob{Name: JobName(a.Parent.ID), Dir: a.Dir, Env: e.cfg.Env, Options: opts}
	for i, job := range a.Jobs {
		args := append(append(slices.Clone(e.cfg.Command), "-trace", job.TraceArg()), simconfig.SimulatorArgs(job.Config)...)
		aj.Tasks = append(aj.Tasks, slurm.Task{Index: a.Tasks[i], Dir: job.Dir, Log: job.Log, Command: args})
	}
	aid, err := e.c.SubmitArray(ctx, aj)
	switch {
	case ctx.Err() != nil:
		return // shutdown: the next start looks for the array by name
	case errors.Is(err, slurm.ErrRejected):
		failAll("Slurm refused the job array: " + err.Error())
		return
	case errors.Is(err, slurm.ErrUnavailable):
		e.unavailable(err)
		e.mu.Lock()
		for i, id := range ids {
			e.maybe[id] = true
			e.tasks[id] = arrayTask{parent: a.Parent.ID, task: a.Tasks[i]}
		}
		e.mu.Unlock()
		e.log.Warn("segments not submitted: Slurm is unavailable; they stay queued", "run", a.Parent.ID, "segments", len(ids), "err", err)
		return
	case err != nil:
		failAll("submit to Slurm: " + err.Error())
		return
	}
	e.recordArray(ctx, a, aid, opts)
}

// startBeyond starts as jobs of their own the segments whose index the
// cluster's MaxArraySize leaves out of any array (its default allows
// 0…1000), and returns the others.
func (e *Executor) startBeyond(ctx context.Context, a runs.Array) runs.Array {
	limit, err := e.c.MaxArraySize(ctx)
	if err != nil {
		limit = slurm.DefaultMaxArraySize
	}
	in := runs.Array{Parent: a.Parent, Dir: a.Dir}
	for i, job := range a.Jobs {
		if a.Tasks[i] < limit {
			in.Jobs, in.Tasks = append(in.Jobs, job), append(in.Tasks, a.Tasks[i])
			continue
		}
		e.Start(ctx, job)
	}
	return in
}

// recordArray stores, in one transaction, the task of job array aid each
// segment of a was submitted as, and follows them. A segment that is no
// longer queued (cancelled, or removed with its trace, while sbatch ran)
// gets its task cancelled instead. opts are what every task asked for.
func (e *Executor) recordArray(ctx context.Context, a runs.Array, aid slurm.JobID, opts slurm.Options) {
	partition, asked := opts.Partition, escapeVerbs(opts.Asked())
	ids := make([]string, len(a.Jobs))
	refs := make(map[string]slurm.Ref, len(a.Jobs))
	totals := make(map[string]int, len(a.Jobs))
	for i, job := range a.Jobs {
		ids[i] = job.Run.ID
		refs[job.Run.ID] = slurm.TaskRef(aid, a.Tasks[i])
		totals[job.Run.ID] = job.Total
	}
	already := map[string]bool{} // adopted by name while the sbatch answered
	saved, _, err := e.host.UpdateRuns(ctx, ids, func(r *cascade.Run) error {
		ref := refs[r.ID]
		if r.HasJob() && refOf(r.Slurm) == ref {
			already[r.ID] = true
			return cascade.ErrUnchanged
		}
		if r.State != cascade.RunQueued || r.HasJob() {
			return cascade.ErrUnchanged
		}
		setSubmitted(r, ref, partition, totals[r.ID], "submitted to Slurm as task %s of a job array, with the other queued segments of its run, each asking for "+asked)
		return nil
	})
	if err != nil {
		// Not stored: look for the tasks by name at the next poll.
		e.log.Error("record Slurm job array", "run", a.Parent.ID, "job", aid, "err", err)
		e.mu.Lock()
		for i, id := range ids {
			e.maybe[id] = true
			e.tasks[id] = arrayTask{parent: a.Parent.ID, task: a.Tasks[i]}
		}
		e.mu.Unlock()
		return
	}
	recorded := map[string]bool{}
	e.mu.Lock()
	for _, r := range saved {
		recorded[r.ID] = true
		e.trackLocked(r)
	}
	e.mu.Unlock()
	var gone []slurm.Ref
	for _, id := range ids {
		if !recorded[id] && !already[id] {
			gone = append(gone, refs[id])
		}
	}
	if len(gone) > 0 {
		e.log.Info("segments ended while their job array was submitted; cancelling their tasks", "run", a.Parent.ID, "tasks", len(gone))
		e.scancel(ctx, gone...)
	}
	e.log.Info("segments submitted as a job array", "run", a.Parent.ID, "job", aid, "tasks", slurm.FormatTasks(a.Tasks), "partition", partition)
}

// segmentTask is the task of its parent's job array a segment would be:
// its place among its parent's segments, read from the parent when not
// known (cache holds the parents read so far); -1 when it cannot be read.
func (e *Executor) segmentTask(ctx context.Context, id string, t arrayTask, cache map[string][]string) int {
	if t.task >= 0 {
		return t.task
	}
	segs, ok := cache[t.parent]
	if !ok {
		p, _, err := e.host.UpdateRun(ctx, t.parent, func(*cascade.Run) error { return cascade.ErrUnchanged })
		if err == nil {
			segs = runs.Segments(p)
		}
		cache[t.parent] = segs
	}
	return slices.Index(segs, id)
}
