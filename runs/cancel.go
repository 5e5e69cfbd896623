package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cascade-sim/cascade"
)

// AlreadyOver is the CONFLICT of acting on run id, which is over in
// state s: "run \"r-1\" has already succeeded".
func AlreadyOver(id string, s cascade.RunState) error {
	how := map[cascade.RunState]string{
		cascade.RunSucceeded: "has already succeeded", cascade.RunFailed: "has already failed", cascade.RunCancelled: "has already been cancelled",
	}[s]
	if how == "" {
		how = "is already " + string(s)
	}
	return cascade.Errorf(cascade.ECONFLICT, "run %q %s", id, how)
}

// Cancel stops a run: a queued one without a job is cancelled at once;
// one the executor has started is the executor's to stop (see
// [Executor.Cancel]), and ends CANCELLED once its simulator or job is gone
// (a pending batch job's run at once). It returns the run as it is then:
// CANCELLED, also for a run whose simulator was the server's own, which
// the local executor waits for; a running batch job's run stays RUNNING
// until the next poll sees the job gone. CONFLICT for a run that is
// already over, NOT_FOUND for none. Every cancelled run's failure class is
// CANCELLED.
func (m *Manager) Cancel(ctx context.Context, id string) (cascade.Run, error) {
	if r, err := m.cfg.Store.Run(ctx, id); err == nil && r.Coordinated() {
		return m.coord.Cancel(ctx, r)
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		switch {
		case r.State.Final():
			return AlreadyOver(id, r.State)
		case r.State == cascade.RunQueued && !r.HasJob():
			cancelQueued(r, "cancelled before it started")
			return nil
		}
		return cascade.ErrUnchanged // started: the executor's
	})
	if err != nil {
		return r, err
	}
	if saved {
		m.queue.Cancel(id)
		m.log.Info("run cancelled", "run", id)
		m.publish(r)
		return r, nil
	}
	changed, err := m.exec.Cancel(ctx, []cascade.Run{r})
	for _, c := range changed {
		if c.ID == id {
			r = c
		}
	}
	if err == nil && !r.State.Final() {
		// The executor may have ended it already (the local one waits
		// for its simulator to be gone): answer with the run as it is.
		if now, err := m.cfg.Store.Run(ctx, id); err == nil {
			r = now
		}
	}
	return r, err
}

// CancelRuns cancels the runs of rs that are not over, with history as
// the line each queued one records: queued ones without a job at once,
// in one transaction, the others through the executor (see Cancel). A
// run the executor cannot cancel (a CONFLICT) is no error.
func (m *Manager) CancelRuns(ctx context.Context, rs []cascade.Run, history string) error {
	var queued []string
	var started []cascade.Run
	for _, r := range rs {
		switch {
		case r.State.Final():
		case r.State == cascade.RunQueued && !r.HasJob():
			queued = append(queued, r.ID)
		default:
			started = append(started, r)
		}
	}
	if len(queued) > 0 {
		saved, _, err := m.cfg.Store.UpdateRuns(ctx, queued, func(r *cascade.Run) error {
			if r.State != cascade.RunQueued || r.HasJob() {
				return cascade.ErrUnchanged
			}
			cancelQueued(r, history)
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

// cancelQueued records a queued run cancelled before it started.
func cancelQueued(r *cascade.Run, history string) {
	now := time.Now().UTC()
	r.State, r.FinishedAt, r.FailureClass = cascade.RunCancelled, &now, cascade.FailureCancelled
	r.History = append(r.History, Stamp(history))
}

// withoutConflicts is err without its CONFLICT errors (and nil when that
// leaves none), err being one error or a join of them.
func withoutConflicts(err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var kept []error
	for _, e := range errs {
		if cascade.ErrorCode(e) != cascade.ECONFLICT {
			kept = append(kept, e)
		}
	}
	return errors.Join(kept...)
}

// RemoveTrace ends and deletes the runs of a trace whose directory left
// the bucket: queued ones are cancelled so no worker starts them, started
// ones are stopped by the executor and waited for until the executor is
// done with them (a simulator of the server's own is gone), then every
// run of the trace, finished ones too, is deleted with its work
// directory, and RunRemoved is published for each. A run launched while
// it works is removed too. After an error it can be called again.
func (m *Manager) RemoveTrace(ctx context.Context, traceID string) error {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	rs, err := m.cfg.Store.TraceRuns(ctx, traceID)
	if err != nil {
		return fmt.Errorf("list runs of trace %s: %w", traceID, err)
	}
	if len(rs) == 0 {
		return nil
	}
	// The coordinator writes none of the trace's runs meanwhile (a
	// sampled run's projection): none is written after its rows are gone.
	unlock := m.coord.Lock()
	defer unlock()
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
		if r.Coordinated() {
			continue // never the executor's: the coordinator's
		}
		if err := m.stop(ctx, r.ID); err != nil {
			return fmt.Errorf("stop run %s: %w", r.ID, err)
		}
	}
	if err := m.cfg.Store.DeleteRuns(ctx, ids); err != nil {
		return fmt.Errorf("delete runs of trace %s: %w", traceID, err)
	}
	for _, r := range rs {
		if err := os.RemoveAll(m.runDir(r.ID)); err != nil {
			m.log.Warn("remove run directory", "run", r.ID, "err", err)
		}
		m.log.Info("run removed with its trace", "run", r.ID, "trace", traceID)
		m.cfg.Events.Publish(cascade.RunRemoved{ID: r.ID, TraceID: traceID, SweepID: cascade.Deref(r.SweepID)})
	}
	return nil
}

// stop ends a run that is queued or started, for RemoveTrace: a queued
// one is committed cancelled, so no worker starts it; the executor stops
// and forgets the job of one it has, and a worker that took it is waited
// for.
func (m *Manager) stop(ctx context.Context, id string) error {
	r, _, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunQueued {
			return cascade.ErrUnchanged
		}
		cancelQueued(r, "cancelled: its trace was removed")
		return nil
	})
	if err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
		return err
	}
	m.mu.Lock()
	a := m.running[id]
	if a != nil {
		a.removed.Store(true)
	}
	m.mu.Unlock()
	m.queue.Cancel(id)
	if err == nil {
		m.exec.Remove(ctx, r)
	}
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
