package sampling

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// Sieve plans as Sieve (ISPASS 2023) does: launches of one kernel name
// form a stratum, split by warp instruction count, recursively, in two at
// the split of least squared deviation (as STEM splits, on instruction
// counts), while the stratum's coefficient of variation is above MaxCV.
// Each stratum is simulated once: its launch closest to its mean
// instruction count, weighted by the stratum's size.
//
// With an error bound ε, the plan then splits the strata that add most to
// the variance of the projected instruction total (N·Σ(x−x̄)² for one
// sample of N launches) until 1.96·√variance ≤ ε·total, or no stratum can
// be split; a budget takes the smallest ε whose plan fits. The figures
// are on instruction counts: Sieve needs no timing.
type Sieve struct {
	// Warmup is how many launches before each representative are
	// simulated first: 0 for DefaultWarmup, NoWarmup for none,
	// WarmupStep for one step of the program (Period).
	Warmup int
	// MaxCV is the coefficient of variation of instruction counts up to
	// which a stratum is left whole; 0 for DefaultSieveMaxCV.
	MaxCV float64
}

// DefaultSieveMaxCV is Sieve's split threshold when its MaxCV is 0.
const DefaultSieveMaxCV = 0.4

// Plan implements Method.
func (m Sieve) Plan(in Input, target Target) (Plan, error) {
	eps, err := target.errorBound()
	if err != nil {
		return Plan{}, err
	}
	warm, err := warmupCount(m.Warmup, in)
	if err != nil {
		return Plan{}, err
	}
	maxCV := m.MaxCV
	switch {
	case maxCV == 0:
		maxCV = DefaultSieveMaxCV
	case maxCV < 0 || math.IsNaN(maxCV):
		return Plan{}, cascade.Errorf(cascade.EINVALID, "sieve: MaxCV must be >= 0, got %g", m.MaxCV)
	}
	if len(in.Launches) == 0 {
		return Plan{}, cascade.Errorf(cascade.EINVALID, "traceId: the trace has no launches to plan")
	}
	p := newPlannerCap(in, warm, m.Warmup == WarmupStep, func(l *Launch) float64 { return float64(l.instructions()) },
		func(_ int, l *Launch) groupKey { return groupKey{name: l.Name} })
	p.stratifyByCV(maxCV)
	base := append([]stratum(nil), p.strata...)
	build := func(eps float64) {
		p.strata = append(p.strata[:0], base...)
		p.refine(eps)
		p.sortStrata()
		p.spreadStrata()
		p.choose(eps)
	}
	return p.finish(cascade.SamplingSieve, eps, target, build)
}

// stratifyByCV makes Sieve's strata: each group split while its
// coefficient of variation is above maxCV.
func (p *planner) stratifyByCV(maxCV float64) {
	p.strata = p.strata[:0]
	for g := range p.groups {
		gr := p.groups[g]
		g := int32(g)
		p.stack = append(p.stack[:0], span{gr.lo, gr.hi})
		for len(p.stack) > 0 {
			s := p.stack[len(p.stack)-1]
			p.stack = p.stack[:len(p.stack)-1]
			if _, cv, _ := p.moments(g, s.lo, s.hi); cv > maxCV {
				if k := p.bestSplit(g, s.lo, s.hi); k >= 0 {
					p.stack = append(p.stack, span{k, s.hi}, span{s.lo, k})
					continue
				}
			}
			p.strata = append(p.strata, stratum{g: g, lo: s.lo, hi: s.hi, n: 1, byMean: true, why: cascade.AllocSieve})
		}
	}
}

// refine splits the strata that add most to the variance of the projected
// total until its 95 % half-width is at most eps of the total, or no
// stratum can be split. A split stratum keeps its place; its upper part
// goes to the end (sortStrata puts it back in order).
func (p *planner) refine(eps float64) {
	total, variance := 0.0, 0.0
	h := &varianceHeap{}
	for si := range p.strata {
		s := p.strata[si]
		mean, _, _ := p.moments(s.g, s.lo, s.hi)
		total += mean * float64(s.hi-s.lo)
		term := p.sieveTerm(s)
		variance += term
		if term > 0 {
			h.items = append(h.items, varianceItem{term: term, stratum: int32(si), lo: s.lo})
		}
	}
	heap.Init(h)
	for h.Len() > 0 && z95*math.Sqrt(max(variance, 0)) > eps*total {
		it := heap.Pop(h).(varianceItem)
		s := p.strata[it.stratum]
		k := p.bestSplit(s.g, s.lo, s.hi)
		if k < 0 {
			continue
		}
		variance -= it.term
		upper := stratum{g: s.g, lo: k, hi: s.hi, n: 1, byMean: true, why: cascade.AllocSieve}
		p.strata[it.stratum].hi = k
		p.strata = append(p.strata, upper)
		for _, si := range [2]int32{it.stratum, int32(len(p.strata) - 1)} {
			term := p.sieveTerm(p.strata[si])
			variance += term
			if term > 0 {
				heap.Push(h, varianceItem{term: term, stratum: si, lo: p.strata[si].lo})
			}
		}
	}
}

// sieveTerm is what stratum s, of one representative, adds to the
// variance of the projected total: N·Σ(x − x̄)² of its counts, and the
// simulator's own spread, N·(N − 1)·(SimSpread·x̄)².
func (p *planner) sieveTerm(s stratum) float64 {
	mean, _, sse := p.moments(s.g, s.lo, s.hi)
	n := float64(s.hi - s.lo)
	spread := SimSpread * mean
	return n*sse + n*(n-1)*spread*spread
}

// sortStrata orders the strata by group, then by value.
func (p *planner) sortStrata() {
	slices.SortFunc(p.strata, func(a, b stratum) int {
		if c := cmp.Compare(a.g, b.g); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	})
}

// varianceItem is a stratum that can be split and what it adds to the
// variance of the projected total.
type varianceItem struct {
	term    float64
	stratum int32
	lo      int32 // the stratum's start in order: ties go to the first
}

// varianceHeap is a max-heap of varianceItems by term.
type varianceHeap struct{ items []varianceItem }

func (h *varianceHeap) Len() int { return len(h.items) }
func (h *varianceHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.term > b.term || a.term == b.term && a.lo < b.lo
}
func (h *varianceHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *varianceHeap) Push(x any)    { h.items = append(h.items, x.(varianceItem)) }
func (h *varianceHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}
