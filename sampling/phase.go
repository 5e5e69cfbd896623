package sampling

import (
	"slices"

	"github.com/cascade-sim/cascade"
)

// afterHeavy marks the launches that follow a heavy stretch of their
// context: light launches (under heavyLaunch times the trace's mean
// launch) whose step before them (the step launches just before, in
// their context) holds more warp instructions than the trace's mean
// step. A model's first decode step after a prefill is one: the prefill
// evicted from L2 the lines the decode kernels find there in the steps
// after, so those launches run slower than their kernel's others, in the
// full simulation as on the GPU (+0.1 to +2.5 % on the stored full runs
// of testdata/fullruns). STEM keeps them apart (heavyStrata): mixed with
// the rest, its least-cost placement picked them for every decode
// stratum at once (their warm-up is the prefill's representatives',
// simulated already), and every projection ran high
// (TestPlacementBias). A heavy launch is not marked: it is the heavy
// stretch itself (a prefill's later layers after its first), its time
// its own footprint's; marking those split a prefill's kernels into
// strata of its first layer and of the others, each costing a prefill
// launch more. Nil when step < 1 or nothing is marked.
func afterHeavy(in Input, step int) []bool {
	n := len(in.Launches)
	if step < 1 || n == 0 {
		return nil
	}
	total := int64(0)
	for i := range in.Launches {
		total += in.Launches[i].instructions()
	}
	// More than the mean step: sum/step > total/n, in integers (the mean
	// rounded down would mark every step of a trace whose steps are all
	// alike); light: x < heavyLaunch·total/n.
	var out []bool
	// sum is the instructions of launches lo..i-1, all of i's context.
	sum, lo := int64(0), 0
	for i := range in.Launches {
		if i > 0 && in.Launches[i-1].Context != in.Launches[i].Context {
			sum, lo = 0, i
		}
		for ; i-lo > step; lo++ {
			sum -= in.Launches[lo].instructions()
		}
		x := in.Launches[i].instructions()
		if sum*int64(n) > int64(step)*total && x*int64(n) < heavyLaunch*total {
			if out == nil {
				out = make([]bool, n)
			}
			out[i] = true
		}
		sum += x
	}
	return out
}

// heavyLaunch is how many mean launches' warp instructions make a launch
// heavy (afterHeavy). On the stored full runs 2, 3 and 4 plan alike: a
// prefill's kernels are several times a decode kernel's.
const heavyLaunch = 2

// heavyStrata splits the after-heavy launches (afterHeavy's marks) into
// those grouped apart from their kernel's others (apart: strata of their
// own) and those left among them but never their representative while
// another launch of the bin can be (shun): a kernel's only after-heavy
// launch. A stratum of one launch is simulated whole, with its warm-up:
// a prefill's last launches, or a request's first decode step, cost as
// much again as their kernel's other strata to correct one launch's
// cycles by a few per cent. Left among the others, its error is that
// part of one launch of its stratum; never picked, it cannot pull every
// stratum's placement to the step after a prefill. Both nil when heavy
// is.
func heavyStrata(in Input, heavy []bool) (apart, shun []bool) {
	if heavy == nil {
		return nil, nil
	}
	type kernel struct {
		name        string
		grid, block cascade.Dim3
		untimed     bool
	}
	ids, n := numbered(in.Launches, func(l *Launch) kernel { return kernel{l.Name, l.Grid, l.Block, !l.Timed()} })
	marked, others := make([]int32, n), make([]int32, n)
	for i, id := range ids {
		if heavy[i] {
			marked[id]++
		} else {
			others[id]++
		}
	}
	apart, shun = make([]bool, len(heavy)), make([]bool, len(heavy))
	for i, id := range ids {
		if !heavy[i] {
			continue
		}
		if marked[id] == 1 && others[id] > 0 {
			shun[i] = true
		} else {
			apart[i] = true
		}
	}
	return apart, shun
}

// coldFirsts marks, for each kernel (name, grid and block, in its
// context) launched more than once, its first launch: the trace's first
// run of its code and, often, of the data its later launches find in L2
// already. On the stored full runs such a launch takes 0.5 to 1.9 % more
// cycles a warp instruction than its kernel's later launches on average
// (positive for 115 of 163 kernels). It is the cheapest representative
// there is, for nothing before it needs simulating, so choose picked it
// wherever it could and every projection of its stratum ran high
// (TestPlacementBias, above all the first step's strata). It returns
// them with shun's (marks added to a copy); nil when nothing is marked.
// Only the least-cost placement passes them over: a pick at random is
// unbiased as it is.
func coldFirsts(in Input, shun []bool) []bool {
	marks := slices.Clone(shun)
	type kernel struct {
		ctx, name   string
		grid, block cascade.Dim3
	}
	ids, n := numbered(in.Launches, func(l *Launch) kernel { return kernel{l.Context, l.Name, l.Grid, l.Block} })
	first, count := make([]int, n), make([]int32, n)
	for i, id := range ids {
		if count[id] == 0 {
			first[id] = i
		}
		count[id]++
	}
	for id, i := range first {
		if count[id] < 2 {
			continue
		}
		if marks == nil {
			marks = make([]bool, len(in.Launches))
		}
		marks[i] = true
	}
	return marks
}

// numbered gives each launch the number of its key among the launches'
// distinct keys, numbered in the order of their first launch, and says how
// many there are. It looks a key up once for each run of launches that
// share it: keys hold kernel names, long strings to hash.
func numbered[K comparable](ls []Launch, key func(*Launch) K) (ids []int32, n int) {
	ids = make([]int32, len(ls))
	index := map[K]int32{}
	var last K
	lastID := int32(-1)
	for i := range ls {
		k := key(&ls[i])
		if lastID < 0 || k != last {
			id, ok := index[k]
			if !ok {
				id = int32(len(index))
				index[k] = id
			}
			last, lastID = k, id
		}
		ids[i] = lastID
	}
	return ids, len(index)
}
