package sampling

import (
	"github.com/cascade-sim/cascade"
)

// STEM plans as STEM+ROOT (MICRO 2025) does, with the bound on the
// projected total met at the least cost (allocate.go): launches of one
// kernel name, grid and block form a group, sorted by measured duration;
// each group is a stratum, split in two at the split of least squared
// deviation (an exact one-dimensional 2-means of the sorted durations:
// deterministic, no random start) where the split plan simulates fewer
// warp instructions; representatives are allocated across strata to meet
// the bound on the total, at 95 % confidence, with the fewest simulated
// warp instructions, warm-up included (Neyman's allocation with costs).
// A stratum's representatives are taken one from each of n equal
// quantile bins of its durations. Launches after a heavy step (a
// prefill: afterHeavy) are grouped apart from their kernel's others, but
// a kernel's only one is left among them, never their representative
// (heavyStrata).
//
// Launches without a measured duration form a stratum of their own in
// their group, sampled once (the launch closest to its mean instruction
// count, as Sieve does); they take no part in the plan's total and error
// (Plan.UntimedLaunches). STEM needs real timing: an input where no
// launch has a duration is an error.
type STEM struct {
	// Warmup is how many launches before each representative are
	// simulated first: 0 for DefaultWarmup, NoWarmup for none,
	// WarmupStep for one step of the program (Period).
	Warmup int
	// Seed, when not 0, picks each representative at random among the
	// launches of its quantile bin (a stratified random sample, as the
	// interval's theory has it) instead of the one closest to the bin's
	// middle: plans evaluated against full runs over many seeds show how
	// often the interval holds the truth (calibrate_test.go).
	Seed uint64
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
	if len(in.Launches) == 0 {
		return Plan{}, cascade.Errorf(cascade.EINVALID, "traceId: the trace has no launches to plan")
	}
	if !in.HasTiming() {
		return Plan{}, cascade.Errorf(cascade.EINVALID,
			"method: STEM needs real timing, and no launch of the trace has a measured duration: plan with SIEVE")
	}
	step := warm
	if m.Warmup != WarmupStep {
		step = Period(in)
	}
	apart, shun := heavyStrata(in, afterHeavy(in, step))
	p := newPlannerCap(in, warm, m.Warmup == WarmupStep, func(l *Launch) float64 {
		if l.Timed() {
			return l.DurationNs
		}
		return float64(l.instructions())
	}, func(i int, l *Launch) groupKey {
		return groupKey{name: l.Name, grid: l.Grid, block: l.Block, untimed: !l.Timed(), afterHeavy: apart != nil && apart[i]}
	})
	p.basisTimed, p.basisWeight = true, TimingWeight
	p.seed, p.shun, p.cold = m.Seed, shun, coldFirsts(in, shun)
	p.costs()
	build := func(eps float64) {
		p.allocate(eps)
		p.choose(eps)
	}
	return p.finish(cascade.SamplingSTEM, eps, target, build)
}
