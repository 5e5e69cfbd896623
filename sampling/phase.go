package sampling

// afterHeavy marks the launches that follow a heavy stretch of their
// context: those whose step before them (the step launches just before,
// in their context) holds more warp instructions than the trace's mean
// step. A model's first decode step after a prefill is one: the prefill
// evicted from L2 the lines the decode kernels find there in the steps
// after, so those launches run slower than their kernel's others, in the
// full simulation as on the GPU (+0.1 to +2.5 % on the stored full runs
// of testdata/fullruns). STEM gives them strata of their own: mixed with
// the rest, its least-cost placement picked them for every decode
// stratum at once (their warm-up is the prefill's representatives',
// simulated already), and every projection ran high
// (TestPlacementBias). Nil when step < 1 or nothing is marked.
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
	// alike).
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
		if sum*int64(n) > int64(step)*total {
			if out == nil {
				out = make([]bool, n)
			}
			out[i] = true
		}
		sum += in.Launches[i].instructions()
	}
	return out
}
