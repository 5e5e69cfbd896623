package runs

import (
	"context"
	"fmt"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/internal/versioned"
)

// kernelSaves is what a Manager keeps of the kernel results of the runs
// it follows: for each running run, what it stored of them since it
// started following it (see save), and the statistics totals of the runs
// that ended here (see [Manager.LiveTotals]).
type kernelSaves struct {
	store Store
	stats *simstats.Table // the Manager's Config.StatsTable

	mu   sync.Mutex
	runs map[string]*savedKernels

	// ended keeps the statistics totals of runs that ended here.
	ended *versioned.Cache[string, StatTotals]
}

func newKernelSaves(store Store, stats *simstats.Table) *kernelSaves {
	return &kernelSaves{store: store, stats: stats, ended: versioned.New[string, StatTotals](maxEndedTotals)}
}

// maxEndedTotals bounds the totals kept of runs that ended here.
const maxEndedTotals = 64

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

// save stores the results take gives as the run's next kernels in
// launch order, after those stored since the Manager started following
// the run: the first save of a run (after a restart too, when its log is
// read again from the start) replaces whatever was stored, later ones
// append. take is called with the run's saves held, so results are stored
// in the order they were taken. It returns how many it stored.
func (k *kernelSaves) save(ctx context.Context, id string, take func() []cascade.RunKernel) (int, error) {
	k.mu.Lock()
	if k.runs == nil {
		k.runs = map[string]*savedKernels{}
	}
	s := k.runs[id]
	if s == nil {
		s = &savedKernels{totals: NewTotaller(k.table())}
		k.runs[id] = s
	}
	k.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	ks := take()
	if len(s.unsaved) > 0 {
		ks = append(s.unsaved, ks...)
		s.unsaved = nil
	}
	if len(ks) == 0 && s.synced {
		return 0, nil
	}
	if err := k.store.AppendRunKernels(ctx, id, s.n, ks); err != nil {
		s.unsaved = ks
		return 0, err
	}
	s.n, s.synced = s.n+len(ks), true
	for _, k := range ks {
		s.cycles += k.SimCycles
	}
	if s.totals != nil && s.totals.Add(ks) != nil {
		s.totals = nil // StatTotals reads the stored kernels instead
	}
	return len(ks), nil
}

// cycles returns the total simulated cycles of the kernel results save
// stored of a run, and whether they are all of the run's stored results
// (a save stored from the first).
func (k *kernelSaves) cycles(id string) (int64, bool) {
	k.mu.Lock()
	s := k.runs[id]
	k.mu.Unlock()
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cycles, s.synced
}

// forget drops what save remembers of a run that ended.
func (k *kernelSaves) forget(id string) {
	k.mu.Lock()
	delete(k.runs, id)
	k.mu.Unlock()
}

// totals returns the totals of run r's statistics as followed while it
// ran here (see [Manager.LiveTotals]).
func (k *kernelSaves) totals(r cascade.Run) (StatTotals, bool) {
	t, err := StatTable(r)
	if err != nil || len(t.Counters) == 0 {
		return StatTotals{}, false
	}
	if tot, ok := k.live(r.ID, t); ok {
		return tot, true
	}
	return k.ended.Get(totalsKey(r))
}

// totalsKey names a run's version.
func totalsKey(r cascade.Run) string { return fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano()) }

// live returns the totals of the kernels of the run stored since the
// Manager started following it, when it is following it and they are of
// the counters of t.
func (k *kernelSaves) live(id string, t *simstats.Table) (StatTotals, bool) {
	k.mu.Lock()
	s := k.runs[id]
	k.mu.Unlock()
	if s == nil {
		return StatTotals{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.totals == nil || s.totals.t != t || !s.synced {
		return StatTotals{}, false
	}
	return s.totals.Totals(), true
}

// keep keeps the totals of the run that just ended, followed as its
// kernels were stored, for its final version (see totals).
func (k *kernelSaves) keep(r cascade.Run) {
	t, err := StatTable(r)
	if err != nil || len(t.Counters) == 0 {
		return
	}
	if tot, ok := k.live(r.ID, t); ok {
		k.ended.Put(totalsKey(r), tot)
	}
}

// table is the table of the counters of runs started now, as StatTable
// gives it for them: the same table as for such a run.
func (k *kernelSaves) table() *simstats.Table {
	t, err := StatTable(cascade.Run{StatCounters: statCounters(k.stats)})
	if err != nil {
		return nil
	}
	return t
}
