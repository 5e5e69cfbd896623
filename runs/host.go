package runs

import (
	"context"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
)

// host is the Manager as its executor sees it: the [Host] it records runs
// through, and nothing else of the Manager.
type host struct{ m *Manager }

var _ Host = host{}

func (h host) UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error) {
	r, saved, err := h.m.cfg.Store.UpdateRun(ctx, id, fn)
	if err == nil && saved {
		h.m.publish(r)
	}
	return r, saved, err
}

func (h host) UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) ([]cascade.Run, []string, error) {
	saved, missing, err := h.m.cfg.Store.UpdateRuns(ctx, ids, fn)
	if err == nil {
		for _, r := range saved {
			h.m.publish(r)
		}
	}
	return saved, missing, err
}

func (h host) Follow(ctx context.Context, id string, total int) Follower {
	return newFollower(h.m, ctx, id, h.m.logs.LogPath(id), total)
}

func (h host) KernelTotal(ctx context.Context, id string) int { return h.m.kernelTotal(ctx, id) }

func (h host) Finish(ctx context.Context, id string, end End) {
	if h.m.removing(id) {
		h.m.kernels.forget(id)
		return // its trace is gone, and the run with it
	}
	h.m.finish(ctx, id, end)
}

func (h host) Enqueue(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rs, err := h.m.cfg.Store.RunsInState(ctx, cascade.RunQueued)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, r := range rs { // the stored runs' order is launch order
		if want[r.ID] {
			h.m.enqueue(r)
		}
	}
	return nil
}

func (h host) StatusChanged(st cascade.ExecutorStatus) {
	h.m.cfg.Events.Publish(cascade.ExecutorUpdated{Status: st})
}

// progress records the parser's progress and stores the kernel results
// take gives (those that became final since the last call). The run is
// saved and published when its counts changed or results were stored
// (stored: by the caller, before), so that a subscriber reads them.
func (m *Manager) progress(ctx context.Context, id string, take func() []cascade.RunKernel, p simlog.Progress, stored bool) {
	n, err := m.kernels.save(ctx, id, take)
	if err != nil {
		m.log.Error("save run kernels", "run", id, "err", err)
	}
	stored = stored || n > 0
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunRunning || (r.KernelsDone == p.Done && r.KernelsTotal == p.Total && !stored) {
			return cascade.ErrUnchanged
		}
		r.KernelsDone, r.KernelsTotal = p.Done, p.Total
		if r.StatCounters == nil {
			r.StatCounters = statCounters(m.cfg.StatsTable)
		}
		return nil
	})
	if err == nil && saved {
		m.publish(r)
	}
}

// finish records a run's end and its results, with more changes to the
// run made by end.Also (when set) in the same write. A run that is over
// already stays as it was.
//
// The database can fail for a while (a connection cut, a failover): the
// results are stored again and again for up to retryPolicy.kernels, and
// a run whose results still could not be stored FAILS saying so, never
// SUCCEEDS without them; its end is written again and again until it is
// stored, for a run left RUNNING without a simulator would never end.
// Only ctx's end (the server stopping) ends the tries: the run stays
// RUNNING, for the next start.
func (m *Manager) finish(ctx context.Context, id string, end End) {
	defer m.kernels.forget(id)
	cycles, counted := int64(0), false
	if end.Log != nil {
		err := m.retry(ctx, "save run kernels", id, m.retryPolicy.kernels, func() error {
			_, err := m.kernels.save(ctx, id, end.Log.TakeAll)
			return err
		})
		if ctx.Err() != nil {
			m.leftRunning(id)
			return
		}
		if err != nil {
			end.State, end.Error = cascade.RunFailed, "its kernel results could not be stored: "+err.Error()
		}
		cycles, counted = m.kernels.cycles(id)
	}
	var power []cascade.StatCounter
	var powerErr error
	if end.Log != nil {
		if power, powerErr = m.recordPower(ctx, id); powerErr != nil {
			m.log.Warn("read power report", "run", id, "err", powerErr)
		}
	}
	state, msg := end.State, end.Error
	var r cascade.Run
	var saved bool
	err := m.retry(ctx, "finish run", id, 0, func() error {
		var err error
		r, saved, err = m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
			if r.State.Final() {
				return cascade.ErrUnchanged
			}
			now := time.Now().UTC()
			if end.Log != nil {
				r.KernelsDone = end.Log.Progress().Done
			}
			if msg != "" {
				r.Error = &msg
			}
			switch {
			case state == cascade.RunCancelled && r.State == cascade.RunQueued:
				r.History = append(r.History, Stamp("cancelled before it started"))
			case state == cascade.RunCancelled:
				r.History = append(r.History, Stamp("cancelled while running"))
			}
			r.State, r.FinishedAt = state, &now
			if r.StatCounters == nil && end.Log != nil {
				r.StatCounters = statCounters(m.cfg.StatsTable)
			}
			if power != nil {
				r.StatCounters = power
			}
			if powerErr != nil {
				r.History = append(r.History, Stamp("power report not read: "+powerErr.Error()))
			}
			recordEnd(r, end.Log)
			if state == cascade.RunSucceeded && counted {
				r.Figures.SimCycles = cycles
			}
			if end.Also != nil {
				end.Also(r)
			}
			return nil
		})
		if cascade.ErrorCode(err) == cascade.ENOTFOUND {
			return errPermanent{err}
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			m.leftRunning(id)
		}
		return
	}
	if !saved {
		return
	}
	if msg != "" {
		m.log.Warn("run "+strings.ToLower(string(state)), "run", id, "error", msg)
	} else {
		m.log.Info("run "+strings.ToLower(string(state)), "run", id)
	}
	m.kernels.keep(r)
	m.publish(r)
	if m.cfg.Ended != nil {
		m.cfg.Ended(r)
	}
}

// leftRunning logs a run whose end the server stopped before storing.
func (m *Manager) leftRunning(id string) {
	m.log.Info("run left running: the server stopped before its end was stored; the next start runs it again", "run", id)
}
