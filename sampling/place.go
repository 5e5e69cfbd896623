package sampling

import (
	"math"
	"math/rand/v2"
)

// Where representatives fall: each representative's warm-up and what it
// adds to the simulation, and choose, which picks a stratum's
// representatives among its near-equal launches by that cost.

// warmFor is the warm-up of a representative of stratum s, in launches,
// under the error bound eps: none for a stratum of one launch holding at
// most eps of the trace's warp instructions (a census launch, simulated
// whatever the bound), else p.warm. A launch simulated without its
// warm-up runs a few per cent off (a kernel's cold first launch, 0.5 to
// 1.9 % more cycles a warp instruction on the stored runs; the L2 before
// its segment is warmed all the same), so such a launch moves the total
// by a few hundredths of the bound, where its step of warm-up can cost
// several times its own instructions: the
// default shape's 300 launches end their prefill with one lm_head, 0.8 %
// of the trace, whose step of warm-up was 7.3 % (43.4 → 38.4 % of the
// warp instructions simulated; the busier of two slots 23.0 → 19.5 %).
func (p *planner) warmFor(s *stratum, eps float64) int {
	if s.hi-s.lo == 1 && float64(p.in[p.order[s.lo]].instructions()) <= eps*float64(p.totalInsts) {
		return 0
	}
	return p.warm
}

// warmLen is how many launches before launch i its warm-up of up to warm
// launches takes: those just before it in its context, under capWarm
// only as many as hold at most warmCap warp instructions.
func (p *planner) warmLen(i int32, warm int) int {
	ctx := p.in[i].Context
	n, insts := 0, int64(0)
	for j := i - 1; j >= 0 && n < warm && p.in[j].Context == ctx; j-- {
		insts += p.in[j].instructions()
		if p.capWarm && n > 0 && insts > p.warmCap {
			break
		}
		n++
	}
	return n
}

// warmup appends to dst the launches to simulate before launch i, oldest
// first: its warm-up of up to warm launches (warmLen).
func (p *planner) warmup(dst []int32, i int32, warm int) []int32 {
	for j := i - int32(p.warmLen(i, warm)); j < i; j++ {
		dst = append(dst, j)
	}
	return dst
}

// costs fills costPrefix.
func (p *planner) costs() {
	p.costPrefix = make([]float64, len(p.order)+1)
	for k, i := range p.order {
		p.costPrefix[k+1] = p.costPrefix[k] + float64(p.cost(i, p.warm))
	}
}

// cost is what making launch i a representative adds to the simulation:
// the instructions (plus one, so empty launches count) of it and its
// warm-up that are not simulated yet.
func (p *planner) cost(i int32, warm int) int64 {
	c := int64(0)
	for j := i - int32(p.warmLen(i, warm)); j <= i; j++ {
		if !p.sim[j] {
			c += p.in[j].instructions() + 1
		}
	}
	return c
}

// mark notes launch i, and its warm-up, as simulated.
// It returns the warp instructions that adds.
func (p *planner) mark(i int32, warm int) int64 {
	added := int64(0)
	for j := i - int32(p.warmLen(i, warm)); j <= i; j++ {
		added += p.markOne(j)
	}
	return added
}

func (p *planner) markOne(i int32) int64 {
	if p.sim[i] {
		return 0
	}
	p.sim[i] = true
	p.simLaunches++
	p.simInsts += p.in[i].instructions()
	return p.in[i].instructions()
}

// tieTolerance is how far a candidate's value may be from the best
// one's and still count as equally good, in standard deviations of its
// stratum's values divided by the plan's basisWeight: a quarter of a
// standard deviation of instructions (Sieve), 2.5 standard deviations of
// measured durations for STEM (TimingWeight, a tenth: a duration's spread
// within a stratum is mostly the GPU's timing noise, which the simulator
// does not show, so nearly every launch of a STEM stratum counts). Among
// those, choose prefers the cheapest (whose warm-up is already simulated):
// the representatives of a step's kernels fall in the same steps and
// share their warm-up. On 20,000 launches of the LLM-like shapes
// (TestSavings, the default plan), 137 to 271× fewer simulated warp
// instructions than the trace's; with every after-heavy launch in strata
// of their own (114 to 242× then) a tenth of this tolerance (a quarter of
// a standard deviation of durations) gave 53 to 242×, a hundredth (a
// quarter of the spread the plan counts, TimingWeight × s: what this
// comment said until 2026-12-06, never what the code did) 35 to 242×.
// The cost of a choice this loose is that cheapness, not the value,
// decides where representatives fall: launches whose warm-up other
// strata's choices simulate, so launches after a heavy step are kept
// apart or never picked (heavyStrata).
const tieTolerance = 0.25

// choose picks each stratum's representatives, stratum by stratum
// (censuses first: chooseOrder), each warmed up by warmFor's launches. A
// stratum sampling n launches splits its sorted launches into n equal
// bins and takes one from each: the one whose value is closest to the
// bin's middle value (to its mean, for a byMean stratum). Of the
// candidates as good as that one (within tieTolerance standard
// deviations), it takes the cheapest to simulate, given what earlier
// choices simulate (a launch right after a representative shares its
// warm-up), then the closest, then the first; it passes over the
// launches p.shun marks while the bin has another, and p.cold's too in
// a bin of minColdBin or more. A plan with a seed picks at random in
// each bin instead, passing over p.shun's alone.
func (p *planner) choose(eps float64) {
	var rng *rand.Rand
	if p.seed != 0 {
		rng = rand.New(rand.NewPCG(p.seed, 0x5eed))
	}
	clear(p.sim)
	p.repCost = append(p.repCost[:0], make([]int64, len(p.strata))...)
	p.simLaunches, p.simInsts = 0, 0
	// p.reps holds each stratum's representatives in plan order; the
	// strata are chosen for census first (chooseOrder).
	at := make([]int, len(p.strata)+1)
	for si := range p.strata {
		at[si+1] = at[si] + int(p.strata[si].n)
	}
	p.reps = append(p.reps[:0], make([]int32, at[len(p.strata)])...)
	for _, si := range p.chooseOrder() {
		s := &p.strata[si]
		pick := p.reps[at[si]:at[si+1]]
		size := s.hi - s.lo
		warm := p.warmFor(s, eps)
		mean, cv, _ := p.moments(s.g, s.lo, s.hi)
		tol := 0.0
		if cv > 0 && !math.IsInf(cv, 1) {
			// On the spread the plan counts as the simulator's.
			tol = tieTolerance * cv * mean / p.basisWeight
		}
		for b := range s.n {
			blo := s.lo + int32(int64(b)*int64(size)/int64(s.n))
			bhi := s.lo + int32(int64(b+1)*int64(size)/int64(s.n))
			target := p.v[p.order[blo+(bhi-blo)/2]]
			if s.byMean {
				target = mean
			}
			if rng != nil && !s.byMean {
				skip := p.shunning(p.shun, blo, bhi)
				best := p.order[blo+rng.Int32N(bhi-blo)]
				for skip(best) {
					best = p.order[blo+rng.Int32N(bhi-blo)]
				}
				p.repCost[si] += p.mark(best, warm)
				pick[b] = best
				continue
			}
			marks := p.shun
			if bhi-blo >= minColdBin {
				marks = p.cold
			}
			skip := p.shunning(marks, blo, bhi)
			dmin := math.Inf(1)
			for k := blo; k < bhi; k++ {
				if !skip(p.order[k]) {
					dmin = min(dmin, math.Abs(p.v[p.order[k]]-target))
				}
			}
			limit := dmin + tol
			// At most maxCandidates costs a bin, evenly spread over it.
			step := max(1, (bhi-blo)/maxCandidates)
			best, bestCost, bestD := int32(-1), int64(0), 0.0
			for k := blo; k < bhi; k++ {
				i := p.order[k]
				d := math.Abs(p.v[i] - target)
				if skip(i) || d > limit || (k-blo)%step != 0 && d != dmin {
					continue
				}
				c := p.cost(i, warm)
				if best < 0 || c < bestCost || c == bestCost && (d < bestD || d == bestD && i < best) {
					best, bestCost, bestD = i, c, d
				}
			}
			p.repCost[si] += p.mark(best, warm)
			pick[b] = best
		}
	}
}

// chooseOrder is the order choose takes the strata in: those that
// simulate every launch first, for they have no choice, then the rest in
// plan order, so that a choice can fall where a census's warm-up is
// simulated anyway. On the default shape's 300 launches under a bound of
// 0.5 %, where the prefill's one lm_head takes its step of warm-up
// (warmFor), the last layer's mlp_down, in that warm-up, then represents
// its prefill stratum instead of the second layer's (43.4 → 42.5 % of the
// warp instructions simulated).
func (p *planner) chooseOrder() []int {
	order := make([]int, 0, len(p.strata))
	for si := range p.strata {
		if s := &p.strata[si]; int(s.n) >= int(s.hi-s.lo) {
			order = append(order, si)
		}
	}
	for si := range p.strata {
		if s := &p.strata[si]; int(s.n) < int(s.hi-s.lo) {
			order = append(order, si)
		}
	}
	return order
}

// shunning is whether choose passes launch i over in the bin of
// order[blo:bhi]: a launch marks marks (p.shun, or p.cold) while the bin
// has another.
func (p *planner) shunning(marks []bool, blo, bhi int32) func(i int32) bool {
	if marks == nil {
		return func(int32) bool { return false }
	}
	for k := blo; k < bhi; k++ {
		if !marks[p.order[k]] {
			return func(i int32) bool { return marks[i] }
		}
	}
	return func(int32) bool { return false }
}

// minColdBin is the fewest launches a bin needs for its least-cost
// placement to pass over a cold first launch (coldFirsts). Of a bin of
// n, a warm representative projects the cold launch short by its excess,
// a share 1/n of the bin's total, and the cold one projects the n − 1
// others long by as much each, (n − 1)/n: the same for n = 2, where the
// cold one, needing no warm-up at the trace's start, is the cheaper.
const minColdBin = 3

// maxCandidates is how many launches of a bin choose weighs at most.
const maxCandidates = 2048
