package sampling

import (
	"cmp"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// What both methods share: grouping launches and sorting each group by the
// value it is stratified by, exact two-way splits of a sorted group,
// choosing representatives with their warm-up, and the plan's figures.
//
// A planner never moves launches: order holds launch indices (int32),
// grouped, each group sorted by value, and a stratum is a segment of it.

// planner is one planning's working memory.
type planner struct {
	in   []Launch
	warm int // warm-up launches per representative
	// capWarm: a representative's warm-up holds at most warmCap warp
	// instructions, but always the launch before it (WarmupStep).
	capWarm bool
	warmCap int64

	v      []float64 // per launch: the value it is stratified by
	order  []int32   // launch indices, grouped, each group by value
	groups []group
	// p1 and p2 are each group's prefix sums of its values, and of their
	// squares, less the group's shift: group g's start at groups[g].lo+g.
	p1, p2 []float64

	strata []stratum
	stack  []span // scratch of the recursive splits
	// costPrefix is the prefix sum, over order, of each launch's cost as
	// a representative (cost with nothing simulated yet); allocs are
	// the allocation's strata (STEM).
	costPrefix []float64
	allocs     []alloc
	// seed, when not 0, picks representatives at random in their bins.
	seed uint64
	// shun, when not nil, marks launches choose never picks while their
	// bin has another (heavyStrata). cold marks those its least-cost
	// placement passes over so, but not a pick at random (coldFirsts).
	shun, cold []bool

	// What choose picked: the representatives, stratum by stratum, and
	// per launch whether it is simulated (a representative or warm-up).
	reps        []int32
	repCost     []int64 // per stratum: the warp instructions its choices added
	sim         []bool
	simLaunches int
	simInsts    int64
	warmScratch []int32
	totalInsts  int64
	basisTimed  bool // the basis is measured duration (STEM)
	// basisWeight is the share of the basis's spread a plan counts as
	// the simulator's: TimingWeight for durations, 1 for instructions.
	basisWeight  float64
	untimedCount int
}

// group is the launches of one key: a segment of order.
type group struct {
	lo, hi int32
	shift  float64 // subtracted from values in the prefix sums
	// byValue: the group is planned on the basis (durations for STEM,
	// instructions for Sieve); a STEM group of launches without a
	// measured duration is not, and is planned by instruction count.
	byValue bool
}

// stratum is a segment of a group, and how many launches it samples.
type stratum struct {
	g      int32
	lo, hi int32
	n      int32
	// byMean: its one representative is the launch closest to its mean
	// (Sieve's rule) rather than those at the middle of its quantiles.
	byMean bool
	// why it has n, and the allocation's n before rounding (STEM).
	why   cascade.SamplingAllocation
	share float64
}

type span struct{ lo, hi int32 }

// groupKey is what launches are grouped by.
type groupKey struct {
	name        string
	grid, block cascade.Dim3
	untimed     bool
	// afterHeavy: the launch follows a heavy stretch, kept apart
	// (heavyStrata).
	afterHeavy bool
}

// newPlanner groups in's launches by key, the groups in order of their
// first launch, and sorts each group by value (then by launch index).
func newPlanner(in Input, warm int, value func(*Launch) float64, key func(int, *Launch) groupKey) *planner {
	return newPlannerCap(in, warm, false, value, key)
}

// newPlannerCap is newPlanner; with capWarm, warm-up is capped at warm
// launches of the trace's mean instructions (WarmupStep).
func newPlannerCap(in Input, warm int, capWarm bool, value func(*Launch) float64, key func(int, *Launch) groupKey) *planner {
	n := len(in.Launches)
	p := &planner{in: in.Launches, warm: warm, v: make([]float64, n), sim: make([]bool, n), basisWeight: 1}
	ids := make([]int32, n)
	index := map[groupKey]int32{}
	var counts []int32
	var keys []groupKey
	last, lastID := groupKey{}, int32(-1)
	for i := range p.in {
		l := &p.in[i]
		p.v[i] = value(l)
		p.totalInsts += l.instructions()
		k := key(i, l)
		if lastID < 0 || k != last {
			id, ok := index[k]
			if !ok {
				id = int32(len(counts))
				index[k] = id
				counts = append(counts, 0)
				keys = append(keys, k)
			}
			last, lastID = k, id
		}
		ids[i] = lastID
		counts[lastID]++
	}
	p.groups = make([]group, len(counts))
	off := int32(0)
	for g, c := range counts {
		p.groups[g] = group{lo: off, hi: off + c, byValue: !keys[g].untimed}
		counts[g] = off // from here on: where the group's next launch goes
		off += c
	}
	p.order = make([]int32, n)
	for i, id := range ids {
		p.order[counts[id]] = int32(i)
		counts[id]++
	}
	v := p.v
	byValue := func(a, b int32) int {
		if c := cmp.Compare(v[a], v[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	p.p1 = make([]float64, n+len(p.groups))
	p.p2 = make([]float64, n+len(p.groups))
	for g := range p.groups {
		gr := &p.groups[g]
		seg := p.order[gr.lo:gr.hi]
		slices.SortFunc(seg, byValue)
		gr.shift = v[seg[len(seg)/2]]
		base := int(gr.lo) + g
		s1, s2 := 0.0, 0.0
		for k, i := range seg {
			d := v[i] - gr.shift
			s1 += d
			s2 += d * d
			p.p1[base+k+1], p.p2[base+k+1] = s1, s2
		}
	}
	if capWarm && n > 0 {
		p.capWarm = true
		p.warmCap = int64(warm) * (p.totalInsts / int64(n))
	}
	return p
}

// sums are the shifted sums of group g's values in order[lo:hi], and of
// their squares.
func (p *planner) sums(g, lo, hi int32) (s1, s2 float64) {
	gr := &p.groups[g]
	base := gr.lo + g
	a, b := base+lo-gr.lo, base+hi-gr.lo
	return p.p1[b] - p.p1[a], p.p2[b] - p.p2[a]
}

// moments are the mean, the coefficient of variation (sample standard
// deviation / mean) and the sum of squared deviations of the values in
// order[lo:hi] of group g.
func (p *planner) moments(g, lo, hi int32) (mean, cv, sse float64) {
	n := float64(hi - lo)
	s1, s2 := p.sums(g, lo, hi)
	m := s1 / n
	mean = p.groups[g].shift + m
	sse = max(s2-s1*m, 0)
	if hi-lo < 2 || sse == 0 {
		return mean, 0, 0
	}
	return mean, coefficientOfVariation(mean, sse/(n-1)), sse
}

// coefficientOfVariation is sqrt(variance)/mean; +Inf for a spread
// around a mean of 0.
func coefficientOfVariation(mean, variance float64) float64 {
	switch {
	case variance <= 0:
		return 0
	case mean <= 0:
		return math.Inf(1)
	}
	return math.Sqrt(variance) / mean
}

// bestSplit is the position k in (lo, hi) that splits order[lo:hi] of
// group g into two parts of least total squared deviation (an exact
// one-dimensional 2-means: the parts of sorted values are contiguous), or
// -1 when all its values are equal. Of equal splits it takes the first.
func (p *planner) bestSplit(g, lo, hi int32) int32 {
	shift := p.groups[g].shift
	total, _ := p.sums(g, lo, hi)
	best, bestScore := int32(-1), math.Inf(-1)
	left := 0.0
	for k := lo + 1; k < hi; k++ {
		a, b := p.v[p.order[k-1]], p.v[p.order[k]]
		left += a - shift
		if a == b {
			continue
		}
		right := total - left
		// Least within-part squares is most between-part: maximise
		// L²/nL + R²/nR (values less the shift, which it does not change).
		score := left*left/float64(k-lo) + right*right/float64(hi-k)
		if score > bestScore {
			best, bestScore = k, score
		}
	}
	return best
}

// finish builds the plan with build: at error bound eps, or, for a budget
// of instructions, at the smallest bound that fits it.
func (p *planner) finish(method cascade.SamplingMethod, eps float64, target Target, build func(eps float64)) (Plan, error) {
	if target.Instructions > 0 {
		var err error
		if eps, err = p.searchBudget(target.Instructions, build); err != nil {
			return Plan{}, err
		}
	} else {
		build(eps)
	}
	return p.plan(method, eps, target), nil
}

// searchBudget finds the smallest error bound in [MinError, 1] whose plan,
// as build makes it, simulates at most budget warp instructions, and
// leaves the planner with that plan. A budget too small for the plan
// of bound 1 is an error.
func (p *planner) searchBudget(budget int64, build func(eps float64)) (float64, error) {
	build(1)
	if p.simInsts > budget {
		return 0, cascade.Errorf(cascade.EINVALID,
			"target: a budget of %d warp instructions is below the %d the smallest plan simulates (one launch a stratum, with its warm-up)",
			budget, p.simInsts)
	}
	build(MinError)
	if p.simInsts <= budget {
		return MinError, nil
	}
	lo, hi := math.Log(MinError), 0.0 // the plan of e^hi fits, that of e^lo does not
	for range 24 {
		mid := (lo + hi) / 2
		build(math.Exp(mid))
		if p.simInsts <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	eps := math.Exp(hi)
	build(eps)
	return eps, nil
}

// plan turns the planner's strata and representatives into a Plan; it
// sorts each stratum's launches by index, so it comes last.
func (p *planner) plan(method cascade.SamplingMethod, eps float64, t Target) Plan {
	pl := Plan{
		Method: method, Basis: cascade.BasisInstructions, ErrorBound: eps, Warmup: p.warm, WarmupStep: p.capWarm,
		Launches: len(p.in), Instructions: p.totalInsts, Samples: len(p.reps),
		SimulatedLaunches: p.simLaunches, SimulatedInstructions: p.simInsts,
	}
	if p.basisTimed {
		pl.Basis = cascade.BasisDuration
	}
	if t.Instructions > 0 {
		pl.TargetInstructions = &t.Instructions
	} else {
		pl.TargetError = &eps
	}
	switch {
	case p.totalInsts > 0:
		pl.SimulatedFraction = float64(p.simInsts) / float64(p.totalInsts)
	case len(p.in) > 0:
		pl.SimulatedFraction = float64(p.simLaunches) / float64(len(p.in))
	}

	// One backing array each for the strata's pointers and lists.
	pl.Strata = make([]cascade.SamplingStratum, len(p.strata))
	dims := make([]cascade.Dim3, 0, 2*len(p.strata))
	floats := make([]float64, 0, 2*len(p.strata)+len(p.reps))
	reps := make([]cascade.SamplingRepresentative, len(p.reps))
	warm := make([]cascade.SamplingLaunch, 0, len(p.reps)*p.warm)
	contexts := map[string]*string{}
	variance := 0.0
	terms := make([]float64, len(p.strata))
	r := 0
	for si := range p.strata {
		s := &p.strata[si]
		st := &pl.Strata[si]
		members := p.order[s.lo:s.hi]
		first := &p.in[members[0]]
		st.Name, st.Size = first.Name, len(members)
		sameGrid, sameBlock := true, true
		var dur, ins welford
		for _, i := range members {
			l := &p.in[i]
			sameGrid = sameGrid && l.Grid == first.Grid
			sameBlock = sameBlock && l.Block == first.Block
			if l.Timed() {
				dur.add(l.DurationNs)
			}
			ins.add(float64(l.instructions()))
		}
		if sameGrid {
			dims = append(dims, first.Grid)
			st.Grid = &dims[len(dims)-1]
		}
		if sameBlock {
			dims = append(dims, first.Block)
			st.Block = &dims[len(dims)-1]
		}
		if dur.n > 0 {
			floats = append(floats, dur.mean, dur.cv())
			st.MeanDurationNs, st.CVDuration = &floats[len(floats)-2], &floats[len(floats)-1]
		}
		st.MeanInstructions, st.CVInstructions = ins.mean, ins.cv()

		// The figures, on the basis: the stratum's share of the total, of
		// the representatives' projection of it, and of its variance.
		size, n := float64(len(members)), float64(s.n)
		repMean := 0.0
		for _, i := range p.reps[r : r+int(s.n)] {
			repMean += p.v[i]
		}
		repMean /= n
		if p.groups[s.g].byValue {
			_, _, sse := p.moments(s.g, s.lo, s.hi)
			pl.Total += sumOf(p.v, members)
			pl.Estimate += size * repMean
			if size > 1 {
				mean := sumOf(p.v, members) / size
				spread := SimSpread * mean
				terms[si] = size * size * (1 - n/size) * (p.basisWeight*p.basisWeight*sse/(size-1) + spread*spread) / n
				variance += terms[si]
			}
		} else {
			pl.UntimedLaunches += len(members)
		}

		st.Why, st.Allocation = s.why, s.share
		if si < len(p.repCost) {
			st.Cost = p.repCost[si]
		}
		st.Representatives = reps[r : r+int(s.n) : r+int(s.n)]
		for k, i := range p.reps[r : r+int(s.n)] {
			l := &p.in[i]
			rep := &st.Representatives[k]
			rep.Launch, rep.KernelID, rep.Weight, rep.Instructions = int(i), l.KernelID, size/n, l.instructions()
			if l.Context != "" {
				c, ok := contexts[l.Context]
				if !ok {
					c = new(string)
					*c = l.Context
					contexts[l.Context] = c
				}
				rep.Context = c
			}
			if l.Timed() {
				floats = append(floats, l.DurationNs)
				rep.DurationNs = &floats[len(floats)-1]
			}
			from := len(warm)
			p.warmScratch = p.warmup(p.warmScratch[:0], i, p.warmFor(s, eps))
			for _, j := range p.warmScratch {
				warm = append(warm, cascade.SamplingLaunch{Launch: int(j), KernelID: p.in[j].KernelID})
			}
			rep.Warmup = warm[from:len(warm):len(warm)]
		}
		r += int(s.n)
		slices.Sort(members)
		st.Members = members
	}
	if variance > 0 {
		for si := range pl.Strata {
			pl.Strata[si].VarianceShare = terms[si] / variance
		}
	}
	// The representatives' spread: a sampled run adds its warm-up's
	// allowance (Project, WarmupAllowance), which no plan can shrink.
	half := z95 * math.Sqrt(variance)
	pl.CILow, pl.CIHigh = pl.Estimate-half, pl.Estimate+half
	if pl.Total > 0 {
		pl.ExpectedError = half / pl.Total
	}
	return pl
}

func sumOf(v []float64, idx []int32) float64 {
	s := 0.0
	for _, i := range idx {
		s += v[i]
	}
	return s
}

// welford gathers a mean and a sum of squared deviations one value at a
// time.
type welford struct {
	n    int
	mean float64
	m2   float64
}

func (w *welford) add(x float64) {
	w.n++
	d := x - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (x - w.mean)
}

// cv is the coefficient of variation: sample standard deviation / mean.
func (w *welford) cv() float64 {
	if w.n < 2 {
		return 0
	}
	cv := coefficientOfVariation(w.mean, w.m2/float64(w.n-1))
	if math.IsInf(cv, 0) {
		return 0 // a spread around 0 (counts of 0 and more): no ratio to give
	}
	return cv
}
