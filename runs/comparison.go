package runs

import (
	"math"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/tracedir"
)

// SimTime is one simulated kernel's time, as [Compare] and [ProjectSteps]
// take it.
type SimTime struct {
	Kernel kernellist.Ref
	Name   string
	SimNs  float64
}

// SimTimes turns log results into simulated times at the given core clock.
// Results whose kernel is unknown (trace name not of the kernel-N form) or
// that were truncated by the simulator's cycle limit are left out, as is
// everything when the clock is unknown.
func SimTimes(results []simlog.KernelResult, coreClockMHz float64) []SimTime {
	var out []SimTime
	for _, r := range results {
		ns, ok := r.SimTimeNs(coreClockMHz)
		if !ok || !r.KernelOK || r.Truncated {
			continue
		}
		out = append(out, SimTime{Kernel: r.Kernel, Name: r.Name, SimNs: ns})
	}
	return out
}

// KernelComparison is one kernel's simulated and measured time.
type KernelComparison struct {
	Kernel       kernellist.Ref
	Name         string
	SimNs        float64
	MeasuredNs   float64 // mean of the matching rows' duration_ns
	ErrorPct     float64 // 100 * (SimNs - MeasuredNs) / MeasuredNs
	Measurements int     // rows averaged into MeasuredNs
}

// Comparison sets a run's simulated kernel times against measured ones.
type Comparison struct {
	Kernels         []KernelComparison // in the order of the simulated kernels
	KernelsCompared int
	MAPE            float64  // mean of |ErrorPct|
	Correlation     *float64 // Pearson, SimNs vs MeasuredNs; nil with < 2 kernels or no variance
	SimTotalNs      float64  // sum over the compared kernels only
	MeasuredTotalNs float64  // sum over the compared kernels only
}

// Kernel returns the comparison of one kernel.
func (c Comparison) Kernel(ref kernellist.Ref) (KernelComparison, bool) {
	for _, k := range c.Kernels {
		if k.Kernel == ref {
			return k, true
		}
	}
	return KernelComparison{}, false
}

// Compare joins simulated kernels to measured rows and computes the run's
// error statistics. It reports false when no kernel could be compared.
//
// A row matches a simulated kernel with the same kernel id when the
// contexts agree: rows naming the kernel's context are used when there are
// any, else rows without a context. A simulated kernel without a context (a
// single-context trace) takes every row with its id. Rows without
// duration_ns take no part.
//
// A traced kernel id is one launch, so several rows for it (invocation 0,
// 1, ... or repeated measurements) measure the same work; they are
// averaged, and Measurements says how many there were.
func Compare(sim []SimTime, rows []tracedir.TimingRow) (Comparison, bool) {
	var c Comparison
	var xs, ys []float64
	for _, s := range sim {
		var exact, loose []float64
		for _, r := range rows {
			if r.KernelID != s.Kernel.ID || r.DurationNs == nil {
				continue
			}
			switch {
			case s.Kernel.Context == "" || r.Context == "":
				loose = append(loose, *r.DurationNs)
			case r.Context == s.Kernel.Context:
				exact = append(exact, *r.DurationNs)
			}
		}
		ds := exact
		if len(ds) == 0 {
			ds = loose
		}
		if len(ds) == 0 {
			continue
		}
		measured := mean(ds)
		k := KernelComparison{
			Kernel: s.Kernel, Name: s.Name, SimNs: s.SimNs, MeasuredNs: measured,
			ErrorPct: 100 * (s.SimNs - measured) / measured, Measurements: len(ds),
		}
		c.Kernels = append(c.Kernels, k)
		c.MAPE += math.Abs(k.ErrorPct)
		c.SimTotalNs += k.SimNs
		c.MeasuredTotalNs += k.MeasuredNs
		xs, ys = append(xs, k.SimNs), append(ys, k.MeasuredNs)
	}
	c.KernelsCompared = len(c.Kernels)
	if c.KernelsCompared == 0 {
		return Comparison{}, false
	}
	c.MAPE /= float64(c.KernelsCompared)
	c.Correlation = pearson(xs, ys)
	return c, true
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// pearson is the correlation coefficient of xs and ys, or nil when it is
// undefined: fewer than two points, or either side constant.
func pearson(xs, ys []float64) *float64 {
	if len(xs) < 2 {
		return nil
	}
	mx, my := mean(xs), mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return nil
	}
	r := sxy / math.Sqrt(sxx*syy)
	r = math.Max(-1, math.Min(1, r)) // rounding can step just past ±1
	return &r
}
