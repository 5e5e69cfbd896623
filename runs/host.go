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
			h.m.queue.Add(r.ID)
		}
	}
	return nil
}

func (h host) StatusChanged(st cascade.ExecutorStatus) {
	h.m.cfg.Events.Publish(cascade.ExecutorUpdated{Status: st})
}

// progress records the parser's progress and kernel results.
func (m *Manager) progress(ctx context.Context, id string, kernels []cascade.RunKernel, p simlog.Progress) {
	if kernels != nil {
		if err := m.saveKernels(ctx, id, kernels); err != nil {
			m.log.Error("save run kernels", "run", id, "err", err)
		}
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
	if end.Log != nil {
		if err := m.saveKernels(ctx, id, end.Log.Kernels()); err != nil {
			m.log.Error("save run kernels", "run", id, "err", err)
		}
	}
	m.forgetKernels(id)
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
		recordEnd(r, end.Log)
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
	m.publish(r)
	if m.cfg.Ended != nil {
		m.cfg.Ended(r)
	}
}

// savedKernels is what a Manager stored last of one run's kernel results:
// each one's key, in launch order.
type savedKernels struct {
	mu   sync.Mutex // one save of the run at a time
	keys []kernelKey
}

// kernelKey is what of a kernel result the log parser may change once
// it is in its list, with its launch uid: the parser appends results,
// fills in a result's statistics when their block ends (a new slice) and
// marks the kernel the cycle limit cut short truncated; a result that
// finished before one of a lower launch uid moves down the list.
type kernelKey struct {
	uid          int
	cycles       int64
	instructions int64
	truncated    bool
	stats        *byte // the first byte of Stats: each encoding is new
	statsLen     int
}

func keyOf(k *cascade.RunKernel) kernelKey {
	key := kernelKey{uid: k.LaunchUID, cycles: k.SimCycles, instructions: k.SimInstructions,
		truncated: k.Truncated, statsLen: len(k.Stats)}
	if len(k.Stats) > 0 {
		key.stats = &k.Stats[0]
	}
	return key
}

// saveKernels stores ks, all of a run's kernel results so far in launch
// order: those from the first one that differs from what it stored last
// for the run (or all, the first time since the server started), so that
// a run whose results grow by a few kernels a progress update writes
// those few, not its whole list again.
func (m *Manager) saveKernels(ctx context.Context, id string, ks []cascade.RunKernel) error {
	m.savedMu.Lock()
	if m.saved == nil {
		m.saved = map[string]*savedKernels{}
	}
	s := m.saved[id]
	if s == nil {
		s = &savedKernels{}
		m.saved[id] = s
	}
	m.savedMu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	from := 0
	for from < len(s.keys) && from < len(ks) && s.keys[from] == keyOf(&ks[from]) {
		from++
	}
	// Whatever happens, the stored rows before from are the ones in ks;
	// after an error, those from from on are not known.
	s.keys = s.keys[:from]
	if err := m.cfg.Store.AppendRunKernels(ctx, id, from, ks[from:]); err != nil {
		return err
	}
	for i := from; i < len(ks); i++ {
		s.keys = append(s.keys, keyOf(&ks[i]))
	}
	return nil
}

// forgetKernels drops what saveKernels remembers of a run that ended.
func (m *Manager) forgetKernels(id string) {
	m.savedMu.Lock()
	delete(m.saved, id)
	m.savedMu.Unlock()
}
