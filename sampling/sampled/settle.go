package sampled

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// A sampled run follows its segments: it is RUNNING once one of them
// started, counts the representatives of those that succeeded, is
// projected and SUCCEEDED once all have, and FAILED (or CANCELLED) as
// soon as one is, the others then cancelled. Whatever changes a segment
// publishes it, and each publication of a segment that started or ended
// settles its sampled run again in the background (settleLater).

// Changed is told of each change of a run the lifecycle publishes: a
// segment that started or ended settles its sampled run, and a full run
// that succeeded is pushed to the sampled runs it checks.
func (c *Coordinator) Changed(r cascade.Run) {
	if r.SampledByID == nil {
		if r.State == cascade.RunSucceeded && r.Sampling == nil && len(r.KernelIDs) == 0 {
			c.fullRunSucceeded(r)
		}
		return
	}
	switch {
	case r.State.Final():
	case r.State == cascade.RunRunning:
		if _, seen := c.started.LoadOrStore(*r.SampledByID, true); seen {
			return // its sampled run is running already
		}
	default:
		return
	}
	c.settleLater(*r.SampledByID)
}

// settleLater settles the sampled run with the given id in the
// background: never under the caller's locks or transaction.
func (c *Coordinator) settleLater(id string) {
	c.background(func(ctx context.Context) {
		if err := c.settleSampled(ctx, id); err != nil && ctx.Err() == nil {
			c.log.Error("settle sampled run", "run", id, "err", err)
		}
	})
}

// fullRunSucceeded tells the succeeded sampled runs of a full run's trace
// and config that their projection can now be checked against it (their
// check is computed on read, SampledRun.check): each gets a history line,
// and so a runUpdated message that carries the check, in the background.
func (c *Coordinator) fullRunSucceeded(full cascade.Run) {
	c.background(func(ctx context.Context) {
		rs, err := c.cfg.Store.TraceRuns(ctx, full.TraceID)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Error("list the sampled runs a full run checks", "run", full.ID, "err", err)
			}
			return
		}
		line := runs.Stamp(fmt.Sprintf("full run %s succeeded: the projection is checked against it", full.ID))
		for _, s := range rs {
			if s.Sampling == nil || s.State != cascade.RunSucceeded || s.SimConfig != full.SimConfig {
				continue
			}
			r, saved, err := c.cfg.Store.UpdateRun(ctx, s.ID, func(r *cascade.Run) error {
				r.History = append(r.History, line)
				return nil
			})
			if err == nil && saved {
				c.publish(r)
			}
		}
	})
}

// settleSampled brings a sampled run up to date with its segments. One
// sampled run is settled at a time.
func (c *Coordinator) settleSampled(ctx context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.cfg.Store.Run(ctx, id)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return nil // removed with its trace
	}
	if err != nil {
		return err
	}
	if p.Split != nil && !p.State.Final() {
		return c.settleSplit(ctx, p)
	}
	if p.Sampling == nil || p.State.Final() {
		c.started.Delete(id)
		return nil
	}
	sr := p.Sampling
	reps, wall, instr := 0, 0.0, int64(0)
	return c.settleSegments(ctx, p, sr.SegmentIDs,
		func(i int, s cascade.Run) {
			reps += sr.SegmentRepresentatives[i]
			instr += sr.SegmentInstructions[i]
			wall += s.Figures.WallSeconds
		},
		"projecting", func(segs []cascade.Run) error { return c.projectSampled(ctx, p, segs) },
		func(r *cascade.Run) (changed, ok bool) {
			if r.Sampling == nil {
				return false, false
			}
			if r.KernelsDone != reps {
				r.KernelsDone, changed = reps, true
			}
			if s := *r.Sampling; s.SimulatorSeconds != wall {
				s.SimulatorSeconds, s.FullRunSecondsEstimate = wall, fullRunEstimate(wall, instr, s.Instructions)
				r.Sampling, changed = &s, true
			}
			return changed, true
		})
}

// settleSegments brings parent run p (sampled or split, not over) up to
// date with its segments, ids in its order: it ends p as soon as one
// failed or was cancelled (endSampled), and once every one succeeded
// calls finish with them (p FAILED if it fails, "<doing> the segments'
// results failed: …"); until then it saves p's progress: RUNNING once
// one started, and whatever progress makes of it (changed: whether it
// changed anything; not ok: r is no longer such a run, left as it is).
// tally is called first with each segment that succeeded.
func (c *Coordinator) settleSegments(ctx context.Context, p cascade.Run, ids []string,
	tally func(i int, s cascade.Run), doing string, finish func(segs []cascade.Run) error,
	progress func(r *cascade.Run) (changed, ok bool)) error {
	segs, err := c.cfg.Store.Segments(ctx, p.ID)
	if err != nil {
		return err
	}
	at := make(map[string]int, len(ids))
	for i, sid := range ids {
		at[sid] = i
	}
	succeeded, started := 0, false
	for _, s := range segs {
		i, ok := at[s.ID]
		if !ok {
			continue
		}
		switch s.State {
		case cascade.RunFailed, cascade.RunCancelled:
			return c.endSampled(ctx, p, segs, s, i)
		case cascade.RunSucceeded:
			succeeded++
			tally(i, s)
			started = true
		case cascade.RunRunning:
			started = true
		}
	}
	if succeeded == len(ids) {
		if err := finish(segs); err != nil {
			c.failSampled(ctx, p.ID, doing+" the segments' results failed: "+err.Error())
			return err
		}
		c.started.Delete(p.ID)
		return nil
	}
	r, saved, err := c.cfg.Store.UpdateRun(ctx, p.ID, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.ErrUnchanged
		}
		changed, ok := progress(r)
		if !ok {
			return cascade.ErrUnchanged
		}
		if started && r.State == cascade.RunQueued {
			now := time.Now().UTC()
			r.State, r.StartedAt, changed = cascade.RunRunning, &now, true
		}
		if !changed {
			return cascade.ErrUnchanged
		}
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		c.publish(r)
	}
	return nil
}

// fullRunEstimate is the seconds a full run of total warp instructions
// would take at the rate of wall seconds for instr; nil without a rate.
func fullRunEstimate(wall float64, instr, total int64) *float64 {
	if instr <= 0 || wall <= 0 {
		return nil
	}
	e := wall / float64(instr) * float64(total)
	return &e
}

// endSampled ends sampled run p because its segment s (the i-th) failed or
// was cancelled: FAILED with the segment's failure class and line, or
// CANCELLED; the segments not over are cancelled.
func (c *Coordinator) endSampled(ctx context.Context, p cascade.Run, segs []cascade.Run, s cascade.Run, i int) error {
	n, kind := 0, "sampled run"
	kernels := ""
	if k := s.KernelIDs; len(k) > 0 {
		kernels = fmt.Sprintf(" (kernels %d–%d)", k[0], k[len(k)-1])
	}
	switch {
	case p.Sampling != nil:
		n = len(p.Sampling.SegmentIDs)
	case p.Split != nil:
		n, kind = len(p.Split.SegmentIDs), "split run"
		// Its launches, and the run whose log says why.
		kernels = fmt.Sprintf(" (launches %d–%d, run %s: see its log)", p.Split.SegmentStarts[i], p.Split.SegmentEnd(i)-1, s.ID)
	}
	why := "failed"
	if s.Error != nil {
		why = *s.Error
	} else if s.State == cascade.RunCancelled {
		why = "cancelled"
	}
	msg := fmt.Sprintf("segment %d of %d%s: %s", i+1, n, kernels, why)
	r, saved, err := c.cfg.Store.UpdateRun(ctx, p.ID, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.ErrUnchanged
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt, r.Error = s.State, &now, &msg
		r.FailureClass, r.FailureLine = s.FailureClass, s.FailureLine
		if s.State == cascade.RunCancelled {
			r.FailureClass = cascade.FailureCancelled
		} else if r.FailureClass == "" {
			r.FailureClass = cascade.FailureOther
		}
		r.History = append(r.History, runs.Stamp(fmt.Sprintf("segment %d of %d %s: the other segments are cancelled", i+1, n, strings.ToLower(string(s.State)))))
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		c.log.Warn(kind+" "+strings.ToLower(string(r.State)), "run", r.ID, "error", msg)
		c.publish(r)
	}
	c.started.Delete(p.ID)
	return c.cfg.Runs.CancelRuns(ctx, segs, fmt.Sprintf("cancelled: segment %d of %d of its %s %s", i+1, n, kind, strings.ToLower(string(s.State))))
}

// failSampled fails a sampled run that is not over with the error msg.
func (c *Coordinator) failSampled(ctx context.Context, id, msg string) {
	r, saved, err := c.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.ErrUnchanged
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt, r.Error, r.FailureClass = cascade.RunFailed, &now, &msg, cascade.FailureOther
		return nil
	})
	if err == nil && saved {
		c.publish(r)
	}
}

// Cancel cancels a sampled or split run and its segments.
func (c *Coordinator) Cancel(ctx context.Context, sr cascade.Run) (cascade.Run, error) {
	id := sr.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	r, saved, err := c.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() {
			return runs.AlreadyOver(id, r.State)
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt, r.FailureClass = cascade.RunCancelled, &now, cascade.FailureCancelled
		r.History = append(r.History, runs.Stamp("cancelled, with its segments"))
		return nil
	})
	if err != nil {
		return r, err
	}
	if saved {
		c.log.Info("run cancelled with its segments", "run", id)
		c.publish(r)
	}
	c.started.Delete(id)
	segs, err := c.cfg.Store.Segments(ctx, id)
	if err != nil {
		return r, err
	}
	return r, c.cfg.Runs.CancelRuns(ctx, segs, "cancelled with its sampled run")
}
