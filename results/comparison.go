package results

import (
	"math"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// simulated returns what a kernel's result says for comparing it with
// measured times: the traced kernel it ran and its simulated time. It
// reports false for a kernel whose trace file name gave no kernel id,
// one the simulator's cycle limit truncated, and any without a core clock.
func simulated(k cascade.RunKernel) (kernellist.Ref, float64, bool) {
	if k.KernelID == nil || k.SimTimeNs == nil || k.Truncated {
		return kernellist.Ref{}, 0, false
	}
	return kernellist.Ref{ID: *k.KernelID, Context: cascade.Deref(k.Context)}, *k.SimTimeNs, true
}

// Compare joins a run's kernels, their SimTimeNs set, to measured rows:
// it sets MeasuredNs and ErrorPct of each kernel it compares and returns
// the run's error statistics. It reports false when no kernel could be
// compared. Kernels that [simulated] rejects take no part. It indexes the
// rows first ([newMeasured]): its time is linear in kernels and rows.
func Compare(kernels []cascade.RunKernel, rows []tracedir.TimingRow) (cascade.RunComparison, bool) {
	var b measuredBuilder
	for _, r := range rows {
		b.add(r)
	}
	return b.index(nil).compare(kernels)
}

// measuredTimes is a trace's measured kernel times indexed by kernel:
//
// A row matches a kernel with the same kernel id when the contexts agree:
// rows naming the kernel's context are used when there are any, else rows
// without a context. A kernel without a context (a single-context trace)
// takes every row with its id. Rows without a time (duration_ns or
// cycles) take no part.
//
// A traced kernel id is one launch, so several rows for it (invocation 0,
// 1, ... or repeated measurements) measure the same work; the measured
// time is their mean. A kernel's rows with duration_ns give its time;
// only when none has one, rows with cycles do: the mean measured cycles
// at the run's core clock (the kernel's simulated time per simulated
// cycle), so that its error is simulated against measured cycles.
type measuredTimes struct {
	exact map[kernellist.Ref]*times // rows naming a context
	noCtx map[int]*times            // rows naming none
	byID  map[int]*times            // every row
}

// times adds up one kernel's measured rows.
type times struct {
	durSum float64
	durN   int
	cycSum float64
	cycN   int
}

func (t *times) add(r tracedir.TimingRow) {
	switch {
	case r.DurationNs != nil:
		t.durSum += *r.DurationNs
		t.durN++
	case r.Cycles != nil:
		t.cycSum += float64(*r.Cycles)
		t.cycN++
	}
}

func (t *times) merge(o *times) {
	t.durSum += o.durSum
	t.durN += o.durN
	t.cycSum += o.cycSum
	t.cycN += o.cycN
}

// ns is the measured time, given the run's ns per cycle for a time in
// cycles; false when there is none.
func (t *times) ns(nsPerCycle float64) (float64, bool) {
	switch {
	case t == nil:
		return 0, false
	case t.durN > 0:
		return t.durSum / float64(t.durN), true
	case t.cycN > 0 && nsPerCycle > 0:
		return t.cycSum / float64(t.cycN) * nsPerCycle, true
	}
	return 0, false
}

func (t *times) has() bool { return t != nil && t.durN+t.cycN > 0 }

// compare is [Compare] over the index.
func (m *measuredTimes) compare(kernels []cascade.RunKernel) (cascade.RunComparison, bool) {
	var c cascade.RunComparison
	var xy moments
	for i, k := range kernels {
		ref, simNs, ok := simulated(k)
		if !ok {
			continue
		}
		var t *times
		switch {
		case ref.Context == "":
			t = m.byID[ref.ID]
		case m.exact[ref].has():
			t = m.exact[ref]
		default:
			t = m.noCtx[ref.ID]
		}
		nsPerCycle := 0.0
		if k.SimCycles > 0 {
			nsPerCycle = simNs / float64(k.SimCycles)
		}
		measuredNs, ok := t.ns(nsPerCycle)
		if !ok {
			continue
		}
		errPct := 100 * (simNs - measuredNs) / measuredNs
		kernels[i].MeasuredNs, kernels[i].ErrorPct = &measuredNs, &errPct
		c.KernelsCompared++
		c.MAPE += math.Abs(errPct)
		c.SimTotalNs += simNs
		c.MeasuredTotalNs += measuredNs
		xy.add(simNs, measuredNs)
	}
	if c.KernelsCompared == 0 {
		return cascade.RunComparison{}, false
	}
	c.MAPE /= float64(c.KernelsCompared)
	c.Correlation = xy.pearson()
	return c, true
}

// moments gathers (x, y) points one at a time for their Pearson
// correlation, by Welford's updates of the means and co-moments: it keeps
// no points (a sweep's pool adds each run's kernels when the run
// succeeds) and, unlike raw sums of squares, loses no precision to
// cancellation. Each side is kept in units of a power of two at least its
// largest magnitude so far (standardized: rescaling by a power of two is
// exact), so no square overflows: a duration of 1e300 gives its
// correlation, not a 0 from an infinite sum.
type moments struct {
	n             int
	ex, ey        int  // the scales' exponents: x is kept as x / 2^ex
	scaledX       bool // ex was set, by a non-zero x
	scaledY       bool
	mx, my        float64 // means, scaled
	sxx, syy, sxy float64 // sums of products of deviations from the means, scaled
	bad           bool    // a point was not finite: no correlation
}

func (s *moments) add(x, y float64) {
	s.n++
	if math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) {
		s.bad = true
		return
	}
	// Until a side's first non-zero value its sums are all 0: any scale.
	if _, e := math.Frexp(x); x != 0 && (!s.scaledX || e > s.ex) {
		f := 0.0
		if s.scaledX {
			f = math.Ldexp(1, s.ex-e) // exact, below 1
		}
		s.ex, s.mx, s.sxx, s.sxy, s.scaledX = e, s.mx*f, s.sxx*f*f, s.sxy*f, true
	}
	if _, e := math.Frexp(y); y != 0 && (!s.scaledY || e > s.ey) {
		f := 0.0
		if s.scaledY {
			f = math.Ldexp(1, s.ey-e)
		}
		s.ey, s.my, s.syy, s.sxy, s.scaledY = e, s.my*f, s.syy*f*f, s.sxy*f, true
	}
	x, y = math.Ldexp(x, -s.ex), math.Ldexp(y, -s.ey) // |x|, |y| < 1
	dx, dy := x-s.mx, y-s.my
	s.mx += dx / float64(s.n)
	s.my += dy / float64(s.n)
	s.sxx += dx * (x - s.mx)
	s.syy += dy * (y - s.my)
	s.sxy += dx * (y - s.my)
}

// pearson is the correlation coefficient of the points, or nil when it is
// undefined: fewer than two points, either side constant, or a point not
// finite.
func (s moments) pearson() *float64 {
	if s.n < 2 || s.bad || s.sxx == 0 || s.syy == 0 {
		return nil
	}
	r := s.sxy / (math.Sqrt(s.sxx) * math.Sqrt(s.syy))
	r = math.Max(-1, math.Min(1, r)) // rounding can step just past ±1
	return &r
}
