package runs

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// DerivedKind is the kind of the statistics [StatColumns] appends to a
// run's counters: the ratios simstats.RatiosOf its counters derives (the
// hit rates, each a fraction; with power, instructions per joule).
const DerivedKind = "derived"

// statCounters is what a run started now records of the counters its log
// is read for: their names, kinds and units, in the table's order.
func statCounters(t *simstats.Table) []cascade.StatCounter {
	cs := make([]cascade.StatCounter, len(t.Counters))
	for i, c := range t.Counters {
		cs[i] = cascade.StatCounter{Name: c.Name, Kind: string(c.Kind), Unit: c.Unit}
	}
	return cs
}

// recordEnd records on a run that is ending what its parsed log (nil
// when it never ran) says of its end: the simulator's build lines and, for
// a failed run, the class and decisive line of the verdict its executor
// reached (OTHER when none was reached: the simulator never started, the
// job was lost); a cancelled run's class is CANCELLED.
func recordEnd(r *cascade.Run, p *simlog.Parser) {
	if p != nil {
		if b := p.Build(); len(b) > 0 {
			r.Figures.SimulatorBuild = strings.Join(b, "; ")
		}
	}
	r.FailureClass, r.FailureLine = "", ""
	switch r.State {
	case cascade.RunCancelled:
		r.FailureClass = cascade.FailureCancelled
	case cascade.RunFailed:
		r.FailureClass = cascade.FailureOther
		if p == nil {
			return
		}
		if o, ok := p.Judged(); ok && !o.Succeeded && o.Class != "" {
			r.FailureClass, r.FailureLine = o.Class, o.Line
		}
	}
}

// StatColumns are the statistics each of r's kernels has a value of, in
// the order of [KernelStats]: its recorded counters, then the derived hit
// ratios (kind [DerivedKind]) simstats.RatiosOf its counters gives. A run
// with no counters (one not started yet, or from before they were
// recorded) has none.
func StatColumns(r cascade.Run) []cascade.StatCounter {
	if len(r.StatCounters) == 0 {
		return []cascade.StatCounter{}
	}
	t, err := StatTable(r)
	if err != nil {
		return []cascade.StatCounter{}
	}
	cs := append([]cascade.StatCounter(nil), r.StatCounters...)
	for _, d := range simstats.RatiosOf(t) {
		cs = append(cs, cascade.StatCounter{Name: d.Name, Kind: DerivedKind, Unit: d.Unit})
	}
	return cs
}

// statTables keeps the tables of runs' recorded counters, by their names
// and kinds: nearly every run has the same ones.
var statTables sync.Map // string → *simstats.Table

// StatTable is the table of r's recorded counters: names and kinds, no
// expressions, for decoding its kernels' statistics and deriving from
// them, never for reading a log.
func StatTable(r cascade.Run) (*simstats.Table, error) {
	var key strings.Builder
	for _, c := range r.StatCounters {
		key.WriteString(c.Name + " " + c.Kind + "\n")
	}
	if t, ok := statTables.Load(key.String()); ok {
		return t.(*simstats.Table), nil
	}
	cs := make([]simstats.Counter, len(r.StatCounters))
	for i, c := range r.StatCounters {
		cs[i] = simstats.Counter{Name: c.Name, Kind: simstats.Kind(c.Kind), Unit: c.Unit}
	}
	t, err := simstats.NewTable(cs)
	if err != nil {
		return nil, fmt.Errorf("run %s's statistics counters: %w", r.ID, err)
	}
	statTables.Store(key.String(), t)
	return t, nil
}

// KernelStats returns k's value of each of its run's [StatColumns], its
// run's counters being t: NaN where absent. A kernel without statistics
// has every value absent.
func KernelStats(t *simstats.Table, k cascade.RunKernel) ([]float64, error) {
	v, err := DecodeStats(t, k)
	if err != nil {
		return nil, err
	}
	if len(t.Counters) == 0 {
		return []float64{}, nil
	}
	return append(v, simstats.Derive(t, v)...), nil
}

// DecodeStats decodes k's statistics as values of t's counters, absent
// past the end of what was stored.
func DecodeStats(t *simstats.Table, k cascade.RunKernel) (simstats.Values, error) {
	v, err := simstats.Decode(k.Stats)
	if err != nil {
		return nil, fmt.Errorf("kernel %d of run %s: %w", k.Seq, k.RunID, err)
	}
	for len(v) < len(t.Counters) {
		v = append(v, simstats.Absent)
	}
	return v[:len(t.Counters)], nil
}

// StatTotals is a run's value of each of its [StatColumns]: each counter
// over its kernels as simstats.Summarize has it (the sum of an aggregate
// counter, the mean of a per-kernel one, the last value of a rate), then
// the hit rates derived from those totals, never averaged from kernels'.
type StatTotals struct {
	Values []float64 // NaN where no kernel had a value
	// Kernels is how many kernels had a value of each: for a hit rate,
	// how many had both of its counters, with accesses.
	Kernels []int
}

// LiveTotals returns the totals of run r's statistics as this Manager
// followed them while it ran here: those of the kernels stored so far
// while it runs, and, once it has ended, those of every kernel for its
// final version (they need not be read back). false when it has none of
// r's version: the reader then adds up the stored kernels.
func (m *Manager) LiveTotals(r cascade.Run) (StatTotals, bool) { return m.kernels.totals(r) }

// Totaller adds up kernels' statistics into a run's [StatTotals].
type Totaller struct {
	t       *simstats.Table
	sum     *simstats.Summer
	derived []int
}

// NewTotaller returns a Totaller of t's counters; nil for a nil t.
func NewTotaller(t *simstats.Table) *Totaller {
	if t == nil {
		return nil
	}
	return &Totaller{t: t, sum: simstats.NewSummer(t), derived: make([]int, len(simstats.RatiosOf(t)))}
}

// Add adds ks, stopping at the first whose statistics it cannot read.
func (a *Totaller) Add(ks []cascade.RunKernel) error {
	for _, k := range ks {
		v, err := DecodeStats(a.t, k)
		if err != nil {
			return err
		}
		a.sum.Add(v)
		for i, d := range simstats.Derive(a.t, v) {
			if simstats.Present(d) {
				a.derived[i]++
			}
		}
	}
	return nil
}

// Totals is the totals of the kernels added so far.
func (a *Totaller) Totals() StatTotals {
	s := a.sum.Summaries()
	tot := StatTotals{Values: make([]float64, 0, len(s)+len(a.derived)), Kernels: make([]int, 0, len(s)+len(a.derived))}
	v := make(simstats.Values, len(s))
	for i := range s {
		v[i] = s[i].Value
		tot.Values = append(tot.Values, s[i].Value)
		tot.Kernels = append(tot.Kernels, s[i].Kernels)
	}
	tot.Values = append(tot.Values, simstats.Derive(a.t, v)...)
	tot.Kernels = append(tot.Kernels, a.derived...)
	return tot
}
