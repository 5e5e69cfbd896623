package runs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
)

// A sampled run follows its segments: it is RUNNING once one of them
// started, counts the representatives of those that succeeded, is
// projected and SUCCEEDED once all have, and FAILED (or CANCELLED) as
// soon as one is, the others then cancelled. Whatever changes a segment
// publishes it, and each publication of a segment that started or ended
// settles its sampled run again in the background (settleLater).

// segmentPublished is told of each published change of a run: a segment
// that started or ended settles its sampled run.
func (m *Manager) segmentPublished(r cascade.Run) {
	if r.SampledByID == nil {
		if r.State == cascade.RunSucceeded && r.Sampling == nil && len(r.KernelIDs) == 0 {
			m.fullRunSucceeded(r)
		}
		return
	}
	switch {
	case r.State.Final():
	case r.State == cascade.RunRunning:
		if _, seen := m.startedSampled.LoadOrStore(*r.SampledByID, true); seen {
			return // its sampled run is running already
		}
	default:
		return
	}
	m.settleLater(*r.SampledByID)
}

// settleLater settles the sampled run with the given id in the
// background: never under the caller's locks or transaction.
func (m *Manager) settleLater(id string) {
	m.background(func(ctx context.Context) {
		if err := m.settleSampled(ctx, id); err != nil && ctx.Err() == nil {
			m.log.Error("settle sampled run", "run", id, "err", err)
		}
	})
}

// background runs fn in a goroutine the Manager waits for as it stops,
// under the server's context; once it is stopping, fn is dropped.
func (m *Manager) background(fn func(ctx context.Context)) {
	ctx := m.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	if m.bgDone {
		return
	}
	m.bg.Go(func() { fn(ctx) })
}

// fullRunSucceeded tells the succeeded sampled runs of a full run's trace
// and config that their projection can now be checked against it (their
// check is computed on read, SampledRun.check): each gets a history line,
// and so a runUpdated message that carries the check, in the background.
func (m *Manager) fullRunSucceeded(full cascade.Run) {
	m.background(func(ctx context.Context) {
		rs, err := m.cfg.Store.TraceRuns(ctx, full.TraceID)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("list the sampled runs a full run checks", "run", full.ID, "err", err)
			}
			return
		}
		line := Stamp(fmt.Sprintf("full run %s succeeded: the projection is checked against it", full.ID))
		for _, s := range rs {
			if s.Sampling == nil || s.State != cascade.RunSucceeded || s.SimConfig != full.SimConfig {
				continue
			}
			r, saved, err := m.cfg.Store.UpdateRun(ctx, s.ID, func(r *cascade.Run) error {
				r.History = append(r.History, line)
				return nil
			})
			if err == nil && saved {
				m.publish(r)
			}
		}
	})
}

// settleSampled brings a sampled run up to date with its segments. One
// sampled run is settled at a time.
func (m *Manager) settleSampled(ctx context.Context, id string) error {
	m.sampledMu.Lock()
	defer m.sampledMu.Unlock()
	p, err := m.cfg.Store.Run(ctx, id)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return nil // removed with its trace
	}
	if err != nil {
		return err
	}
	if p.Sampling == nil || p.State.Final() {
		m.startedSampled.Delete(id)
		return nil
	}
	segs, err := m.cfg.Store.Segments(ctx, id)
	if err != nil {
		return err
	}
	sr := p.Sampling
	at := make(map[string]int, len(sr.SegmentIDs))
	for i, sid := range sr.SegmentIDs {
		at[sid] = i
	}
	reps, succeeded, started := 0, 0, false
	var wall float64
	var instr int64
	for _, s := range segs {
		i, ok := at[s.ID]
		if !ok {
			continue
		}
		switch s.State {
		case cascade.RunFailed:
			return m.endSampled(ctx, p, segs, s, i)
		case cascade.RunCancelled:
			return m.endSampled(ctx, p, segs, s, i)
		case cascade.RunSucceeded:
			succeeded++
			reps += sr.SegmentRepresentatives[i]
			instr += sr.SegmentInstructions[i]
			wall += s.Figures.WallSeconds
			started = true
		case cascade.RunRunning:
			started = true
		}
	}
	if succeeded == len(sr.SegmentIDs) {
		if err := m.projectSampled(ctx, p, segs); err != nil {
			m.failSampled(ctx, id, "projecting the segments' results failed: "+err.Error())
			return err
		}
		m.startedSampled.Delete(id)
		return nil
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() || r.Sampling == nil {
			return cascade.ErrUnchanged
		}
		changed := false
		if started && r.State == cascade.RunQueued {
			now := time.Now().UTC()
			r.State, r.StartedAt, changed = cascade.RunRunning, &now, true
		}
		if r.KernelsDone != reps {
			r.KernelsDone, changed = reps, true
		}
		s := *r.Sampling
		if s.SimulatorSeconds != wall {
			s.SimulatorSeconds, s.FullRunSecondsEstimate, changed = wall, fullRunEstimate(wall, instr, s.Instructions), true
		}
		if !changed {
			return cascade.ErrUnchanged
		}
		r.Sampling = &s
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		m.publish(r)
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
func (m *Manager) endSampled(ctx context.Context, p cascade.Run, segs []cascade.Run, s cascade.Run, i int) error {
	n := len(p.Sampling.SegmentIDs)
	kernels := ""
	if k := s.KernelIDs; len(k) > 0 {
		kernels = fmt.Sprintf(" (kernels %d–%d)", k[0], k[len(k)-1])
	}
	why := "failed"
	if s.Error != nil {
		why = *s.Error
	} else if s.State == cascade.RunCancelled {
		why = "cancelled"
	}
	msg := fmt.Sprintf("segment %d of %d%s: %s", i+1, n, kernels, why)
	r, saved, err := m.cfg.Store.UpdateRun(ctx, p.ID, func(r *cascade.Run) error {
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
		r.History = append(r.History, Stamp(fmt.Sprintf("segment %d of %d %s: the other segments are cancelled", i+1, n, strings.ToLower(string(s.State)))))
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		m.log.Warn("sampled run "+strings.ToLower(string(r.State)), "run", r.ID, "error", msg)
		m.publish(r)
	}
	m.startedSampled.Delete(p.ID)
	return m.cancelSegments(ctx, segs, fmt.Sprintf("cancelled: segment %d of %d of its sampled run %s", i+1, n, strings.ToLower(string(s.State))))
}

// failSampled fails a sampled run that is not over with the error msg.
func (m *Manager) failSampled(ctx context.Context, id, msg string) {
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.ErrUnchanged
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt, r.Error, r.FailureClass = cascade.RunFailed, &now, &msg, cascade.FailureOther
		return nil
	})
	if err == nil && saved {
		m.publish(r)
	}
}

// cancelSegments cancels the segments of segs that are not over: queued
// ones without a job at once, the others through the executor.
func (m *Manager) cancelSegments(ctx context.Context, segs []cascade.Run, history string) error {
	var queued []string
	var started []cascade.Run
	for _, s := range segs {
		switch {
		case s.State.Final():
		case s.State == cascade.RunQueued && !s.HasJob():
			queued = append(queued, s.ID)
		default:
			started = append(started, s)
		}
	}
	if len(queued) > 0 {
		saved, _, err := m.cfg.Store.UpdateRuns(ctx, queued, func(r *cascade.Run) error {
			if r.State != cascade.RunQueued || r.HasJob() {
				return cascade.ErrUnchanged
			}
			cancelQueued(r, history)
			r.FailureClass = cascade.FailureCancelled
			return nil
		})
		if err != nil {
			return err
		}
		done := map[string]bool{}
		for _, r := range saved {
			done[r.ID] = true
			m.queue.Cancel(r.ID)
			m.publish(r)
		}
		for _, id := range queued { // started meanwhile
			if done[id] {
				continue
			}
			r, err := m.cfg.Store.Run(ctx, id)
			if err == nil && !r.State.Final() {
				started = append(started, r)
			}
		}
	}
	if len(started) == 0 {
		return nil
	}
	_, err := m.exec.Cancel(ctx, started)
	return withoutConflicts(err)
}

// cancelSampled cancels a sampled run and its segments.
func (m *Manager) cancelSampled(ctx context.Context, id string) (cascade.Run, error) {
	m.sampledMu.Lock()
	defer m.sampledMu.Unlock()
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State.Final() {
			return cascade.Errorf(cascade.ECONFLICT, "run %q is %s already", id, strings.ToLower(string(r.State)))
		}
		now := time.Now().UTC()
		r.State, r.FinishedAt, r.FailureClass = cascade.RunCancelled, &now, cascade.FailureCancelled
		r.History = append(r.History, Stamp("cancelled, with its segments"))
		return nil
	})
	if err != nil {
		return r, err
	}
	if saved {
		m.log.Info("sampled run cancelled", "run", id)
		m.publish(r)
	}
	m.startedSampled.Delete(id)
	segs, err := m.cfg.Store.Segments(ctx, id)
	if err != nil {
		return r, err
	}
	return r, m.cancelSegments(ctx, segs, "cancelled with its sampled run")
}

// settleUnfinished settles, at start, the sampled runs a previous server
// left unfinished: their segments may have ended meanwhile (Slurm jobs),
// or all succeeded before it could project them.
func (m *Manager) settleUnfinished(parents []cascade.Run) {
	for _, p := range parents {
		m.settleLater(p.ID)
	}
}
