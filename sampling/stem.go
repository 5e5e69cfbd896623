package sampling

import (
	"math"

	"github.com/cascade-sim/cascade"
)

// STEM plans as STEM+ROOT (MICRO 2025) does: launches of one kernel
// name, grid and block form a group; each group is split by measured
// duration into clusters, recursively, in two at the split of least
// squared deviation (an exact one-dimensional 2-means of the sorted
// durations: deterministic, no random start), while a cluster's
// coefficient of variation is above MaxCV and the two halves together
// need fewer samples than it does. A cluster of N launches with mean μ
// and standard deviation σ samples
//
//	n = ceil((1.96·σ / (μ·ε))²), clamped to [1, N],
//
// launches, ε the target error: by the central limit theorem its mean is
// then within ε of the truth at 95 % confidence. Its representatives are
// taken one from each of n equal quantile bins of its durations.
//
// Launches without a measured duration form a cluster of their own in
// their group, sampled once (the launch closest to its mean instruction
// count, as Sieve does); they take no part in the plan's total and error
// (Plan.UntimedLaunches). STEM needs real timing: an input where no
// launch has a duration is an error.
type STEM struct {
	// Warmup is how many launches before each representative are
	// simulated first: 0 for DefaultWarmup, NoWarmup for none,
	// WarmupStep for one step of the program (Period).
	Warmup int
	// MaxCV is the coefficient of variation up to which a cluster is
	// left whole; 0 for ε/1.96, where one sample meets the target.
	MaxCV float64
}

// Plan implements Method.
func (m STEM) Plan(in Input, target Target) (Plan, error) {
	eps, err := target.errorBound()
	if err != nil {
		return Plan{}, err
	}
	warm, err := warmupCount(m.Warmup, in)
	if err != nil {
		return Plan{}, err
	}
	if m.MaxCV < 0 || math.IsNaN(m.MaxCV) {
		return Plan{}, cascade.Errorf(cascade.EINVALID, "stem: MaxCV must be >= 0, got %g", m.MaxCV)
	}
	if len(in.Launches) == 0 {
		return Plan{}, cascade.Errorf(cascade.EINVALID, "stem: no launches to plan")
	}
	if !in.HasTiming() {
		return Plan{}, cascade.Errorf(cascade.EINVALID,
			"stem: no launch has a measured duration (the trace has no real timing): plan with SIEVE")
	}
	p := newPlannerCap(in, warm, m.Warmup == WarmupStep, func(l *Launch) float64 {
		if l.Timed() {
			return l.DurationNs
		}
		return float64(l.instructions())
	}, func(l *Launch) groupKey {
		return groupKey{name: l.Name, grid: l.Grid, block: l.Block, untimed: !l.Timed()}
	})
	p.basisTimed = true
	build := func(eps float64) {
		m.cluster(p, eps)
		p.choose()
	}
	return p.finish(cascade.SamplingSTEM, eps, target, build)
}

// cluster splits each group into clusters for error bound eps, and sizes
// their samples.
func (m STEM) cluster(p *planner, eps float64) {
	maxCV := m.MaxCV
	if maxCV == 0 {
		maxCV = eps / z95
	}
	p.strata = p.strata[:0]
	for g := range p.groups {
		gr := p.groups[g]
		g := int32(g)
		if !gr.byValue {
			p.strata = append(p.strata, stratum{g: g, lo: gr.lo, hi: gr.hi, n: 1, byMean: true})
			continue
		}
		p.stack = append(p.stack[:0], span{gr.lo, gr.hi})
		for len(p.stack) > 0 {
			s := p.stack[len(p.stack)-1]
			p.stack = p.stack[:len(p.stack)-1]
			_, cv, _ := p.moments(g, s.lo, s.hi)
			n := sampleSize(cv, s.hi-s.lo, eps)
			if n > 1 && cv > maxCV {
				if k := p.bestSplit(g, s.lo, s.hi); k >= 0 {
					_, cvl, _ := p.moments(g, s.lo, k)
					_, cvr, _ := p.moments(g, k, s.hi)
					if sampleSize(cvl, k-s.lo, eps)+sampleSize(cvr, s.hi-k, eps) < n {
						// Right then left: the clusters come out in
						// ascending order of duration.
						p.stack = append(p.stack, span{k, s.hi}, span{s.lo, k})
						continue
					}
				}
			}
			p.strata = append(p.strata, stratum{g: g, lo: s.lo, hi: s.hi, n: n})
		}
	}
}

// sampleSize is STEM's sample of a cluster of size launches with
// coefficient of variation cv, for error bound eps: ceil((1.96·cv/eps)²)
// clamped to [1, size].
func sampleSize(cv float64, size int32, eps float64) int32 {
	r := z95 * cv / eps
	n := r * r
	switch {
	case !(n < float64(size)): // NaN and +Inf too
		return size
	case n <= 1:
		return 1
	}
	return int32(math.Ceil(n))
}
