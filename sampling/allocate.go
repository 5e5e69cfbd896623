package sampling

import (
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// Allocation: how STEM meets a bound on the projected total at the least
// cost.
//
// The bound ε is on the total, at 95 % confidence: the variance of the
// stratified estimate of the total,
//
//	V = Σ_h N_h²·S_h²·(1/n_h − 1/N_h),
//
// over strata h of N_h launches whose basis has standard deviation S_h
// (with the simulator's own spread, SimSpread of the mean, added),
// n_h of them simulated, may be at most V* = (ε·T/1.96)², T the total.
// A representative of stratum h costs c_h: the warp instructions of the
// launch and of its warm-up, on average over the stratum's launches (plus
// one a launch, so empty ones count). The least Σ c_h·n_h under V ≤ V*
// is Neyman's allocation with costs,
//
//	n_h ∝ N_h·S_h / √c_h,
//
// each n_h clamped to [1, N_h] (a stratum with no representative cannot
// be projected; one simulated whole adds no variance), rounded up, then
// any representative whose removal keeps V ≤ V* dropped, dearest first.
//
// A group (launches of one name, grid and block) starts as one stratum.
// A stratum with two or more representatives is split in two where its
// sorted basis splits best (bestSplit) when the plan of the split costs
// less: a split lowers the spread each half carries but costs at least
// one representative a half. Splits are tried until none pays.

// alloc is a stratum as the allocation sees it.
type alloc struct {
	stratum
	size float64 // N_h
	sd   float64 // S_h, of the basis
	cost float64 // c_h
	// A stratum may be split when its best split is known to pay: tried
	// once, then not again.
	tried bool
}

// allocate makes p's strata for error bound eps: each timed group split
// where splitting pays, each stratum with its Neyman allocation.
func (p *planner) allocate(eps float64) {
	p.strata = p.strata[:0]
	var as []alloc
	total := 0.0
	for g := range p.groups {
		gr := p.groups[g]
		g := int32(g)
		if !gr.byValue {
			continue
		}
		as = append(as, p.newAlloc(g, gr.lo, gr.hi))
		s1, _ := p.sums(g, gr.lo, gr.hi)
		total += s1 + gr.shift*float64(gr.hi-gr.lo)
	}
	target := eps * total / z95
	vstar := target * target
	cost := neyman(as, vstar)
	for {
		best, bestCost := -1, cost
		var bestPair [2]alloc
		for h := range as {
			a := &as[h]
			if a.n < 2 || a.tried {
				continue
			}
			k := p.bestSplit(a.g, a.lo, a.hi)
			if k < 0 {
				a.tried = true
				continue
			}
			l, r := p.newAlloc(a.g, a.lo, k), p.newAlloc(a.g, k, a.hi)
			trial := slices.Concat(as[:h], []alloc{l, r}, as[h+1:])
			// A split must save half a representative at least: equal
			// costs keep the stratum whole.
			if c := neyman(trial, vstar); c < bestCost-0.5*min(l.cost, r.cost) {
				best, bestCost, bestPair = h, c, [2]alloc{l, r}
			} else {
				a.tried = true
			}
		}
		if best < 0 {
			break
		}
		as = slices.Concat(as[:best], bestPair[:], as[best+1:])
		cost = neyman(as, vstar)
	}
	neyman(as, vstar)
	p.allocs = as
	// Strata in the groups' order (a group's in ascending basis), the
	// untimed groups' one stratum each among them.
	a := 0
	for g := range p.groups {
		gr := p.groups[g]
		if !gr.byValue {
			p.strata = append(p.strata, stratum{g: int32(g), lo: gr.lo, hi: gr.hi, n: 1, byMean: true, why: cascade.AllocUntimed})
			continue
		}
		for ; a < len(as) && as[a].g == int32(g); a++ {
			p.strata = append(p.strata, as[a].stratum)
		}
	}
	p.spreadStrata()
}

// newAlloc is the stratum order[lo:hi] of group g, unallocated.
func (p *planner) newAlloc(g, lo, hi int32) alloc {
	mean, _, sse := p.moments(g, lo, hi)
	size := float64(hi - lo)
	sd := 0.0
	if hi-lo > 1 {
		// The basis's spread and the simulator's own (SimSpread).
		sd = math.Sqrt(p.basisWeight*p.basisWeight*sse/(size-1) + SimSpread*SimSpread*mean*mean)
	}
	return alloc{stratum: stratum{g: g, lo: lo, hi: hi, n: 1}, size: size, sd: sd,
		cost: (p.costPrefix[hi] - p.costPrefix[lo]) / size}
}

// neyman allocates as's representatives for variance vstar (n and
// share), and returns their cost Σ c_h·n_h.
func neyman(as []alloc, vstar float64) float64 {
	// fixed: 0 free, 1 held at one representative, 2 simulated whole.
	fixed := make([]int8, len(as))
	for h := range as {
		if as[h].sd == 0 || as[h].size <= 1 {
			fixed[h] = 1
		}
	}
	for range len(as) + 1 {
		num, den := 0.0, vstar
		for h := range as {
			a := &as[h]
			den += a.size * a.sd * a.sd
			switch fixed[h] {
			case 0:
				num += a.size * a.sd * math.Sqrt(a.cost)
			case 1:
				den -= a.size * a.size * a.sd * a.sd
			}
		}
		changed := false
		for h := range as {
			a := &as[h]
			if fixed[h] != 0 {
				continue
			}
			if den <= 0 {
				// The strata held at one already exceed the bound:
				// every free one is simulated whole.
				a.share, fixed[h], changed = a.size, 2, true
				continue
			}
			a.share = num / den * a.size * a.sd / math.Sqrt(a.cost)
			switch {
			case a.share >= a.size:
				fixed[h], changed = 2, true
			case a.share < 1:
				fixed[h], changed = 1, true
			}
		}
		if !changed {
			break
		}
	}
	variance := 0.0
	for h := range as {
		a := &as[h]
		switch fixed[h] {
		case 1:
			if a.sd == 0 || a.size <= 1 {
				a.share = 0 // no spread: nothing to allocate
			}
			a.n, a.why = 1, cascade.AllocLeast
		case 2:
			a.n, a.why = int32(a.size), cascade.AllocAll
		default:
			a.n, a.why = int32(math.Min(math.Ceil(a.share-1e-9), a.size)), cascade.AllocNeyman
		}
		variance += a.variance(a.n)
	}
	// Rounding up overshoots: drop representatives the bound can spare,
	// dearest first.
	order := make([]int, len(as))
	for h := range order {
		order[h] = h
	}
	slices.SortStableFunc(order, func(x, y int) int { return -cmpFloat(as[x].cost, as[y].cost) })
	for _, h := range order {
		a := &as[h]
		for a.n > 1 {
			v := variance - a.variance(a.n) + a.variance(a.n-1)
			if v > vstar {
				break
			}
			variance, a.n = v, a.n-1
		}
	}
	cost := 0.0
	for h := range as {
		cost += as[h].cost * float64(as[h].n)
	}
	return cost
}

// variance is the stratum's part of the total's variance with n
// representatives.
func (a *alloc) variance(n int32) float64 {
	if float64(n) >= a.size {
		return 0
	}
	return a.size * a.size * a.sd * a.sd * (1/float64(n) - 1/a.size)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MinSpreadDF is how many degrees of freedom a plan gives a sampled
// run to measure the simulator's spread with: Σ (n_h − 1) over its
// strata. Without them every stratum has one representative and a run
// cannot tell a simulator that varies from one that does not.
const MinSpreadDF = 8

// minSpreadSize is the fewest launches a stratum needs to be given a
// second representative for the spread: in a smaller one it would be a
// large share of the launches.
const minSpreadSize = 8

// spreadStrata gives a second representative to the strata of most
// spread (N_h·S_h, the simulator's own included) that have one, until the
// plan has MinSpreadDF degrees of freedom or no stratum of minSpreadSize
// launches or more is left.
func (p *planner) spreadStrata() {
	df := 0
	var ones []int
	score := make([]float64, len(p.strata))
	for h := range p.strata {
		s := &p.strata[h]
		df += int(s.n) - 1
		if s.n == 1 && s.hi-s.lo >= minSpreadSize && p.groups[s.g].byValue && s.why != cascade.AllocUntimed {
			mean, _, sse := p.moments(s.g, s.lo, s.hi)
			size := float64(s.hi - s.lo)
			spread := SimSpread * mean
			score[h] = size * math.Sqrt(p.basisWeight*p.basisWeight*sse/(size-1)+spread*spread)
			ones = append(ones, h)
		}
	}
	slices.SortStableFunc(ones, func(x, y int) int { return -cmpFloat(score[x], score[y]) })
	for _, h := range ones {
		if df >= MinSpreadDF {
			return
		}
		p.strata[h].n, p.strata[h].byMean, p.strata[h].why = 2, false, cascade.AllocSpread
		df++
	}
}
