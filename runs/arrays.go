package runs

import (
	"context"

	"github.com/cascade-sim/cascade"
)

// ArrayExecutor is an [Executor] that starts the queued segments of one
// sampled or split run together: the Slurm executor submits them as one
// job array. With one, the Manager queues a sampled or split run's
// segments as one entry, under the run's own id, and when its turn comes
// hands those still queued without a job to StartArray at once, as one
// of the executor's Slots. Other runs are started one by one, as with any
// executor.
type ArrayExecutor interface {
	Executor
	// StartArray is Start for the prepared jobs of several queued
	// segments of one sampled or split run, with Start's guarantees for
	// each of them.
	StartArray(ctx context.Context, a Array)
}

// Array is queued segments of one sampled or split run, prepared to start
// together.
type Array struct {
	Parent cascade.Run // the sampled or split run
	// Dir is the parent's work directory (which it never runs in), for
	// what the segments' jobs share: the Slurm executor's array script.
	Dir string
	// Jobs are the segments' jobs in the parent's order; Tasks[i] is the
	// place of Jobs[i] among the parent's segments (0 for its first):
	// distinct, increasing, the same for a segment whichever array it is
	// started in.
	Jobs  []Job
	Tasks []int
}

// Segments returns the ids of the segments of a sampled or split run, in
// its order; nil for another run.
func Segments(r cascade.Run) []string {
	switch {
	case r.Sampling != nil:
		return r.Sampling.SegmentIDs
	case r.Split != nil:
		return r.Split.SegmentIDs
	}
	return nil
}

// enqueue hands stored, queued runs to the executor, in the order given
// after any queued before: each is prepared and started as its turn comes
// (see [Executor.Start]). A run already queued keeps its place; one that
// is no longer queued when its turn comes is skipped. With an
// [ArrayExecutor], a segment waits under its parent's id, with its
// siblings.
func (m *Manager) enqueue(rs ...cascade.Run) {
	_, arrays := m.exec.(ArrayExecutor)
	for _, r := range rs {
		if arrays && r.SampledByID != nil {
			m.queue.Add(*r.SampledByID)
			continue
		}
		m.queue.Add(r.ID)
	}
}

// startArray is the queue's work for a sampled or split run, with an
// [ArrayExecutor]: its segments still queued without a job are prepared
// and handed to StartArray together. A segment whose preparation fails
// fails alone.
func (m *Manager) startArray(ctx context.Context, ax ArrayExecutor, parent cascade.Run) {
	a := Array{Parent: parent, Dir: m.runDir(parent.ID)}
	peak := int64(-1)
	for i, id := range Segments(parent) {
		r, err := m.cfg.Store.Run(ctx, id)
		if err != nil {
			if ctx.Err() == nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
				m.log.Error("load segment to start", "run", id, "err", err)
			}
			continue
		}
		if r.State != cascade.RunQueued || r.HasJob() {
			continue
		}
		// Known from before the executor is handed the job: RemoveTrace
		// waits for it.
		act, untrack := m.track(id)
		defer untrack()
		job, ok := m.prepared(ctx, r, act)
		if !ok {
			continue
		}
		if peak < 0 { // the segments share their trace and config
			peak = m.peakRSS(ctx, r)
		}
		job.PeakRSS = peak
		a.Jobs, a.Tasks = append(a.Jobs, job), append(a.Tasks, i)
	}
	if len(a.Jobs) > 0 {
		ax.StartArray(ctx, a)
	}
}
