package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/slurm"
)

// Start implements [runs.Executor]: it writes the job's script into its
// directory and submits it with sbatch. The run stays queued, now with its
// job id; the poller takes it from there. While Slurm does not answer the
// run is held, queued, and handed back once it does; a submission whose
// answer was lost is looked for by the run's name first. ctx is the
// server's, not the run's: a cancel that lands while sbatch runs finds the
// job id stored, or the job is cancelled here.
func (e *Executor) Start(ctx context.Context, job runs.Job) {
	id := job.Run.ID
	e.mu.Lock()
	down := !e.status.Healthy
	if down {
		e.held[id] = true // handed back once Slurm answers
	}
	e.mu.Unlock()
	if down {
		return
	}

	opts, err := ConfigOptions(job.Config)
	if err != nil {
		e.host.Finish(ctx, id, runs.End{State: cascade.RunFailed, Error: "Slurm job options: " + err.Error()})
		return
	}
	opts = e.cfg.Slurm.Options.Merge(opts)
	args := append(append(slices.Clone(e.cfg.Command), "-trace", job.TraceArg()), simconfig.SimulatorArgs(job.Config)...)
	sj := slurm.Job{Name: JobName(id), Dir: job.Dir, Log: job.Log, Command: args, Env: e.cfg.Env, Options: opts}
	jid, err := e.c.Submit(ctx, sj)
	switch {
	case ctx.Err() != nil:
		return // shutdown: the next start looks for the job by name
	case errors.Is(err, slurm.ErrRejected):
		e.host.Finish(ctx, id, runs.End{State: cascade.RunFailed, Error: "Slurm refused the job: " + err.Error()})
		return
	case errors.Is(err, slurm.ErrUnavailable):
		e.unavailable(err)
		e.mu.Lock()
		e.maybe[id] = true
		e.mu.Unlock()
		e.log.Warn("run not submitted: Slurm is unavailable; it stays queued", "run", id, "err", err)
		return
	case err != nil:
		e.host.Finish(ctx, id, runs.End{State: cascade.RunFailed, Error: "submit to Slurm: " + err.Error()})
		return
	}
	e.record(ctx, id, slurm.JobRef(jid), opts.Partition, job.Total, "submitted to Slurm as job %s, asking for "+escapeVerbs(opts.Asked()))
}

// record stores the job (or job array's task) a run was submitted as, or
// adopted, and follows it. A run that is no longer queued (cancelled, or
// removed with its trace, while sbatch ran) gets its job cancelled
// instead. history says how, with a %s for the job.
func (e *Executor) record(ctx context.Context, id string, jid slurm.Ref, partition string, total int, history string) {
	already := false // the run has this job already: adopted while its sbatch answered
	r, saved, err := e.host.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.HasJob() && refOf(r.Slurm) == jid {
			already = true
			return cascade.ErrUnchanged
		}
		if r.State != cascade.RunQueued || r.HasJob() {
			return cascade.ErrUnchanged
		}
		setSubmitted(r, jid, partition, total, history)
		return nil
	})
	switch {
	case err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND:
		// Not stored: look for the job by name at the next poll.
		e.log.Error("record Slurm job", "run", id, "job", jid.String(), "err", err)
		e.mu.Lock()
		e.maybe[id] = true
		e.mu.Unlock()
		return
	case already:
		// Both ways of learning a run's job found this one: the first poll
		// after a start adopted it by name while the sbatch that queued it
		// was answering (a run launched as the server started is both
		// queued for submission and looked for). It is followed already.
		return
	case err != nil || !saved:
		e.log.Info("run ended while it was submitted; cancelling its job", "run", id, "job", jid.String())
		e.scancel(ctx, jid)
		return
	}
	e.mu.Lock()
	e.trackLocked(r)
	e.mu.Unlock()
	e.log.Info("run submitted", "run", id, "job", jid.String(), "partition", partition)
}

// escapeVerbs makes s safe in a history format: a partition or account
// name with a % in it is printed as it is.
func escapeVerbs(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// setSubmitted records on a queued run the job it was submitted as.
func setSubmitted(r *cascade.Run, jid slurm.Ref, partition string, total int, history string) {
	n := int64(jid.ID)
	r.Slurm = cascade.SlurmJob{JobID: &n, Partition: partition, State: string(slurm.Pending)}
	if jid.IsTask() {
		task := jid.Task
		r.Slurm.ArrayTaskID = &task
	}
	if total > 0 {
		r.KernelsTotal = total
	}
	r.History = append(r.History, runs.Stamp(fmt.Sprintf(history, jid)))
}
