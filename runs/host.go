package runs

import (
	"context"
	"strings"
	"sync"
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
	return newFollower(h.m, ctx, id, h.m.LogPath(id), total)
}

func (h host) KernelTotal(ctx context.Context, id string) int { return h.m.kernelTotal(ctx, id) }

func (h host) Finish(ctx context.Context, id string, end End) {
	if h.m.removing(id) {
		h.m.forgetKernels(id)
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
// take gives (those that became final since the last call).
func (m *Manager) progress(ctx context.Context, id string, take func() []cascade.RunKernel, p simlog.Progress) {
	if err := m.saveKernels(ctx, id, take); err != nil {
		m.log.Error("save run kernels", "run", id, "err", err)
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.State != cascade.RunRunning || (r.KernelsDone == p.Done && r.KernelsTotal == p.Total) {
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
func (m *Manager) finish(ctx context.Context, id string, end End) {
	defer m.forgetKernels(id)
	cycles, counted := int64(0), false
	if end.Log != nil {
		if err := m.saveKernels(ctx, id, end.Log.TakeAll); err != nil {
			m.log.Error("save run kernels", "run", id, "err", err)
		}
		cycles, counted = m.savedCycles(id)
	}
	var power []cascade.StatCounter
	var powerErr error
	if end.Log != nil {
		if power, powerErr = m.recordPower(ctx, id); powerErr != nil {
			m.log.Warn("read power report", "run", id, "err", powerErr)
		}
	}
	state, msg := end.State, end.Error
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
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
	if err != nil {
		if cascade.ErrorCode(err) != cascade.ENOTFOUND {
			m.log.Error("finish run", "run", id, "err", err)
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
	m.keepTotals(r)
	m.publish(r)
	if m.cfg.Ended != nil {
		m.cfg.Ended(r)
	}
}

// savedKernels is what a Manager stored of a running run's kernel
// results since it started following it: how many, and the totals of
// their statistics.
type savedKernels struct {
	mu sync.Mutex // one save of the run at a time
	n  int        // rows stored: the next result is the run's kernel n
	// synced is set once a save stored from 0, replacing what was stored.
	synced bool
	// unsaved are results taken from the parser that a failed save did
	// not store: the next save stores them first.
	unsaved []cascade.RunKernel
	totals  *Totaller // of the n stored; nil after a kernel it could not read
	cycles  int64     // the simulated cycles of the n stored
}

// saveKernels stores the results take gives as the run's next kernels in
// launch order, after those stored since the Manager started following
// the run: the first save of a run (after a restart too, when its log is
// read again from the start) replaces whatever was stored, later ones
// append. take is called with the run's saves held, so results are stored
// in the order they were taken.
func (m *Manager) saveKernels(ctx context.Context, id string, take func() []cascade.RunKernel) error {
	m.savedMu.Lock()
	if m.saved == nil {
		m.saved = map[string]*savedKernels{}
	}
	s := m.saved[id]
	if s == nil {
		s = &savedKernels{totals: NewTotaller(m.statsTable())}
		m.saved[id] = s
	}
	m.savedMu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	ks := take()
	if len(s.unsaved) > 0 {
		ks = append(s.unsaved, ks...)
		s.unsaved = nil
	}
	if len(ks) == 0 && s.synced {
		return nil
	}
	if err := m.cfg.Store.AppendRunKernels(ctx, id, s.n, ks); err != nil {
		s.unsaved = ks
		return err
	}
	s.n, s.synced = s.n+len(ks), true
	for _, k := range ks {
		s.cycles += k.SimCycles
	}
	if s.totals != nil && s.totals.Add(ks) != nil {
		s.totals = nil // StatTotals reads the stored kernels instead
	}
	return nil
}

// savedCycles returns the total simulated cycles of the kernel results
// saveKernels stored of a run, and whether they are all of the run's
// stored results (a save stored from the first).
func (m *Manager) savedCycles(id string) (int64, bool) {
	m.savedMu.Lock()
	s := m.saved[id]
	m.savedMu.Unlock()
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cycles, s.synced
}

// forgetKernels drops what saveKernels remembers of a run that ended.
func (m *Manager) forgetKernels(id string) {
	m.savedMu.Lock()
	delete(m.saved, id)
	m.savedMu.Unlock()
}
