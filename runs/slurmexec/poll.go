package slurmexec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/slurm"
)

// Run implements [runs.Executor]: it polls every interval until ctx is
// done, the first time at once, and reads the logs of running jobs every
// second meanwhile. Jobs keep running when it returns.
func (e *Executor) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { e.tailLoop(ctx) })
	e.poll(ctx)
	t := time.NewTicker(e.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.poll(ctx)
		}
	}
}

// poll is one round: cancels Slurm did not take, submissions it did not
// answer, then every unfinished job's status with one Poll.
func (e *Executor) poll(ctx context.Context) {
	e.mu.Lock()
	cancels := slices.SortedFunc(maps.Keys(e.cancels), slurm.Ref.Compare)
	pending := len(e.held) + len(e.maybe)
	jobs := slices.Collect(maps.Values(e.jobs))
	e.mu.Unlock()
	if len(cancels) > 0 {
		e.scancel(ctx, cancels...)
	}
	if pending > 0 {
		e.resubmit(ctx)
	}
	if len(jobs) == 0 {
		if pending == 0 && !e.Status().Healthy {
			e.probe(ctx) // nothing else asks Slurm whether it is back
		}
		return
	}
	refs := make([]slurm.Ref, len(jobs))
	for i, j := range jobs {
		refs[i] = j.ref
	}
	sts, err := e.c.PollRefs(ctx, refs)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		e.unavailable(err)
	} else {
		e.available()
	}
	var changed []statusChange
	for _, j := range jobs {
		if st, ok := sts[j.ref]; ok {
			if c, ok := e.apply(ctx, j, st); ok {
				changed = append(changed, c)
			}
		}
	}
	e.saveStatuses(ctx, changed)
}

// usageWait is how long a job that ended is left to the next polls while
// accounting has not recorded its peak memory: slurmdbd records a step's
// usage a moment after the job ends, and a run finished at the first
// sight of its end had no peakRssBytes (a flaky TestRealAccelSimOnSlurm).
const usageWait = 10 * time.Second

// awaitUsage reports whether the ended job's end waits for a later poll:
// the job completed (a failed one is said at once), the cluster keeps
// accounting, sacct gives no MaxRSS yet, and it has not waited usageWait
// already.
func (e *Executor) awaitUsage(ctx context.Context, j *job, st slurm.Status) bool {
	if st.MaxRSS > 0 || st.State != slurm.Completed {
		return false
	}
	if on, err := e.c.AccountingEnabled(ctx); err != nil || !on {
		return false
	}
	if j.endedAt.IsZero() {
		j.endedAt = time.Now()
	}
	return time.Since(j.endedAt) < usageWait
}

// statusChange is a job's new status that its run has yet to record.
type statusChange struct {
	j        *job
	st, prev slurm.Status
}

// statusBatch bounds the runs whose new status one transaction records.
const statusBatch = 500

// apply maps one job's status to its run: an end finishes the run at
// once; a pending or running job's status, when it changed, is returned
// for saveStatuses to record (running makes the run running), and a
// running job's log is followed from now on.
func (e *Executor) apply(ctx context.Context, j *job, st slurm.Status) (statusChange, bool) {
	if st.State.Done() {
		if e.awaitUsage(ctx, j, st) {
			return statusChange{}, false
		}
		e.end(ctx, j, st)
		return statusChange{}, false
	}
	if st.Node == "" {
		st.Node = j.last.Node
	}
	prev := j.last
	j.last = st
	if st.State == slurm.Running {
		e.mu.Lock()
		if j.f == nil {
			j.f = e.host.Follow(ctx, j.runID, j.total)
		}
		e.mu.Unlock()
	}
	if prev.SlurmState == st.SlurmState && prev.Reason == st.Reason && prev.Node == st.Node && prev.Partition == st.Partition {
		return statusChange{}, false
	}
	return statusChange{j: j, st: st, prev: prev}, true
}

// saveStatuses records the changed statuses of one poll, statusBatch runs
// to a transaction: the first poll after thousands of submissions records
// every pending reason in a few writes, not one per run.
func (e *Executor) saveStatuses(ctx context.Context, changed []statusChange) {
	for batch := range slices.Chunk(changed, statusBatch) {
		byRun := make(map[string]statusChange, len(batch))
		ids := make([]string, len(batch))
		for i, c := range batch {
			byRun[c.j.runID], ids[i] = c, c.j.runID
		}
		saved, missing, err := e.host.UpdateRuns(ctx, ids, func(r *cascade.Run) error {
			if r.State.Final() {
				return cascade.ErrUnchanged
			}
			st := byRun[r.ID].st
			setJob(r, st)
			if st.State == slurm.Running && r.State == cascade.RunQueued {
				start := time.Now().UTC()
				if !st.Start.IsZero() {
					start = st.Start.UTC()
				}
				r.State, r.StartedAt, r.Error = cascade.RunRunning, &start, nil
			}
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				e.log.Error("record Slurm job statuses", "runs", len(ids), "err", err)
			}
			continue
		}
		if len(missing) > 0 { // removed meanwhile
			e.mu.Lock()
			for _, id := range missing {
				delete(e.jobs, id)
			}
			e.mu.Unlock()
		}
		for _, r := range saved {
			c := byRun[r.ID]
			if c.st.State == slurm.Running && c.prev.State != slurm.Running {
				e.log.Info("run started", "run", r.ID, "job", c.j.ref.String(), "node", c.st.Node)
			}
		}
	}
}

// setJob records a job's status on its run.
func setJob(r *cascade.Run, st slurm.Status) {
	r.Slurm.State, r.Slurm.Reason = st.SlurmState, st.Reason
	if st.State == slurm.Lost {
		r.Slurm.State = string(slurm.Lost)
	}
	if st.Node != "" {
		r.Slurm.Node = st.Node
	}
	if st.Partition != "" {
		r.Slurm.Partition = st.Partition
	}
}

// end records the end of a run's job: its results from the log, and its
// state from both the log and Slurm's verdict.
func (e *Executor) end(ctx context.Context, j *job, st slurm.Status) {
	e.mu.Lock()
	delete(e.jobs, j.runID)
	e.mu.Unlock()
	if st.Node == "" {
		st.Node = j.last.Node
	}
	e.mu.Lock()
	f, cancelled := j.f, j.cancelled
	e.mu.Unlock()
	if f == nil {
		f = e.host.Follow(ctx, j.runID, j.total)
	}
	p := f.Finish()
	prog := p.Progress()
	after := fmt.Sprintf("after %d of %d kernels", prog.Done, prog.Total)
	job := "Slurm job " + j.ref.String()
	verdict := job + " " + st.Describe()
	end := runs.End{Log: p}
	var note string
	switch st.State {
	case slurm.Completed:
		end = runs.Judge(p, simlog.Exit{}, j.traceID)
	case slurm.Cancelled:
		end.State = cascade.RunCancelled
		if !cancelled {
			end.Error = fmt.Sprintf("%s was cancelled outside Cascade (%s) %s", job, st.Describe(), after)
		}
	case slurm.Lost:
		if o := p.Outcome(simlog.Exit{}); o.Succeeded {
			end.State = cascade.RunSucceeded
			note = fmt.Sprintf("Slurm no longer knows job %s; its log shows the simulation complete", j.ref)
		} else if cancelled {
			// A job array's task cancelled before it started leaves no
			// trace in squeue or sacct.
			end.State = cascade.RunCancelled
			note = fmt.Sprintf("Slurm no longer knows job %s, which Cascade cancelled", j.ref)
		} else {
			end.State = cascade.RunFailed
			last := "never seen by this server"
			if j.last.SlurmState != "" {
				last = "last seen " + j.last.SlurmState
				if j.last.Node != "" {
					last += " on " + j.last.Node
				}
			}
			end.Error = fmt.Sprintf("lost: Slurm no longer knows job %s (%s; it left squeue, and the cluster keeps no accounting to ask); its log shows %d of %d kernels done", j.ref, last, prog.Done, prog.Total)
		}
	case slurm.Failed:
		exit := simlog.Exit{Code: st.ExitCode}
		if st.Signal != 0 {
			exit = simlog.Exit{Code: -1, Signal: syscall.Signal(st.Signal).String()}
		}
		end.State, end.Error = cascade.RunFailed, p.Outcome(exit).Reason+" ("+verdict+")"
	case slurm.Timeout:
		p.Outcome(simlog.Exit{Code: -1, Signal: "killed", TimeLimit: true}) // its failure class
		end.State, end.Error = cascade.RunFailed, fmt.Sprintf("%s hit its time limit (%s) %s; raise time= in %s or CASCADE_SLURM_TIME", job, st.Describe(), after, OptionsFile)
	case slurm.OutOfMemory:
		p.Outcome(simlog.Exit{Code: -1, Signal: "killed", OOM: true}) // its failure class
		end.State, end.Error = cascade.RunFailed, fmt.Sprintf("%s ran out of memory (%s) %s; raise mem= in %s or CASCADE_SLURM_MEM", job, st.Describe(), after, OptionsFile)
	case slurm.NodeFail:
		end.State, end.Error = cascade.RunFailed, fmt.Sprintf("%s's node failed (%s) %s", job, st.Describe(), after)
	default:
		end.State, end.Error = cascade.RunFailed, fmt.Sprintf("%s ended %s %s", job, st.Describe(), after)
	}
	end.Also = func(r *cascade.Run) {
		setJob(r, st)
		recordCost(r, st)
		if r.StartedAt == nil && !st.Start.IsZero() {
			t := st.Start.UTC()
			r.StartedAt = &t
		}
		if !st.End.IsZero() {
			t := st.End.UTC()
			r.FinishedAt = &t
		}
		if note != "" {
			r.History = append(r.History, runs.Stamp(note))
		}
	}
	e.host.Finish(ctx, j.runID, end)
}

// recordCost records on a run what its job cost: its wall time, sacct's
// Elapsed when accounting has it, else from the job's start to its end as
// squeue last showed them; and its peak resident memory, sacct's MaxRSS,
// unknown without accounting.
func recordCost(r *cascade.Run, st slurm.Status) {
	switch {
	case st.Elapsed > 0:
		r.Figures.WallSeconds = st.Elapsed.Seconds()
	case !st.Start.IsZero() && st.End.After(st.Start):
		r.Figures.WallSeconds = st.End.Sub(st.Start).Seconds()
	}
	if st.MaxRSS > 0 {
		r.Figures.PeakRSSBytes = st.MaxRSS
	}
}

// tailLoop reads the logs of running jobs every second, as the local
// executor's nudges do: progress and kernel results as they are written.
func (e *Executor) tailLoop(ctx context.Context) {
	t := time.NewTicker(min(time.Second, e.interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		var fs []runs.Follower
		for _, j := range e.jobs {
			if j.f != nil {
				fs = append(fs, j.f)
			}
		}
		e.mu.Unlock()
		for _, f := range fs {
			f.Grew()
		}
	}
}
