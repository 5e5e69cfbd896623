package results

import (
	"cmp"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// statTally gathers one statistic's pairs one at a time for its
// [cascade.StatCorrelation]: a run of a million kernels is correlated
// without holding its pairs, only the few furthest off.
type statTally struct {
	stat, unit string

	n             int
	xy            moments // simulated, measured
	absSum, sqSum float64 // of Simulated - Measured
	apeSum        float64 // of |ErrorPct|
	apeN          int
	simSum        float64
	measSum       float64

	within1, within10, over, under int
	worst                          []cascade.CounterPair // furthest first
}

// add counts p.
func (s *statTally) add(p cascade.CounterPair) {
	d := p.Simulated - p.Measured
	s.n++
	s.xy.add(p.Simulated, p.Measured)
	s.absSum += math.Abs(d)
	s.sqSum += d * d
	s.simSum += p.Simulated
	s.measSum += p.Measured
	switch {
	case d > 0:
		s.over++
	case d < 0:
		s.under++
	}
	if p.ErrorPct != nil {
		e := math.Abs(*p.ErrorPct)
		s.apeSum += e
		s.apeN++
		if e < 1 {
			s.within1++
		}
		if e < 10 {
			s.within10++
		}
	}
	s.keepWorst(p)
}

// keepWorst keeps p among the cascade.MaxFurthestOff pairs furthest off:
// an undefined error (measured 0, simulated not) is further than any.
func (s *statTally) keepWorst(p cascade.CounterPair) {
	if len(s.worst) == cascade.MaxFurthestOff && !further(p, s.worst[len(s.worst)-1]) {
		return
	}
	i, _ := slices.BinarySearchFunc(s.worst, p, func(w, p cascade.CounterPair) int {
		if further(w, p) {
			return -1
		}
		return 1
	})
	s.worst = slices.Insert(s.worst, i, p)
	if len(s.worst) > cascade.MaxFurthestOff {
		s.worst = s.worst[:cascade.MaxFurthestOff]
	}
}

// further reports whether a is further off than b.
func further(a, b cascade.CounterPair) bool {
	switch {
	case a.ErrorPct == nil || b.ErrorPct == nil:
		return a.ErrorPct == nil && b.ErrorPct != nil
	default:
		return math.Abs(*a.ErrorPct) > math.Abs(*b.ErrorPct)
	}
}

// result is the statistic's figures; ok is false without a pair.
func (s *statTally) result() (cascade.StatCorrelation, bool) {
	c := cascade.StatCorrelation{Stat: s.stat, Unit: s.unit, Kernels: s.n, FurthestOff: slices.Clone(s.worst)}
	if s.n == 0 {
		return c, false
	}
	n := float64(s.n)
	c.Pearson = s.xy.pearson()
	c.MAE = s.absSum / n
	if s.apeN > 0 {
		c.MAPE = cascade.Ptr(s.apeSum / float64(s.apeN))
	}
	if s.measSum != 0 {
		c.AggregateErrorPct = cascade.Ptr(100 * s.absSum / math.Abs(s.measSum))
		c.TotalErrorPct = cascade.Ptr(100 * (s.simSum - s.measSum) / math.Abs(s.measSum))
		c.NRMSE = cascade.Ptr(math.Sqrt(s.sqSum/n) / math.Abs(s.measSum/n))
	}
	c.Within1Pct, c.Within10Pct, c.Over, c.Under = s.within1, s.within10, s.over, s.under
	c.SimTotal, c.MeasuredTotal = s.simSum, s.measSum
	return c, true
}

// pairError is 100 (sim - measured) / measured: 0 when both are 0, nil
// when only measured is.
func pairError(sim, measured float64) *float64 {
	switch {
	case measured != 0:
		return cascade.Ptr(100 * (sim - measured) / measured)
	case sim == 0:
		return cascade.Ptr(0.0)
	}
	return nil
}

// rankFigure names the figure configs are ranked by on a statistic, as
// the correlator's legends give them: the mean absolute percentage error
// for cycles, instructions and IPC, the NRMSE for the others (whose small
// counts make percentages explode).
func rankFigure(stat string) string {
	switch stat {
	case "cycles", "instructions", "warp_instructions", "ipc":
		return "MAPE"
	}
	return "NRMSE"
}

// figure is c's value of rankFigure(c.Stat); false when undefined.
func figure(c *cascade.StatCorrelation) (float64, bool) {
	if c == nil {
		return 0, false
	}
	v := c.NRMSE
	if rankFigure(c.Stat) == "MAPE" {
		v = c.MAPE
	}
	if v == nil {
		return 0, false
	}
	return *v, true
}

// rank sets each statistic's Best (the config of the least figure, with
// two or more ranked, unless another config's figure is as small) and
// returns the overall best: the config of the least mean rank over the
// statistics ranked, configs of equal figures sharing their ranks' mean,
// a config without a figure of one ranked last there; nil when no
// statistic ranks two configs, or when the least mean rank is shared
// (configs the figures cannot tell apart have no best among them).
func rank(configs []string, stats []cascade.ConfigStatCorrelation) *string {
	rankSum := make([]float64, len(configs))
	figured := make([]bool, len(configs)) // ranked on some statistic
	ranked := 0
	for i := range stats {
		st := &stats[i]
		st.Figure = rankFigure(st.Stat)
		var order []int
		for j, c := range st.Configs {
			if _, ok := figure(c); ok {
				order = append(order, j)
			}
		}
		if len(order) < 2 {
			continue
		}
		fig := func(j int) float64 { f, _ := figure(st.Configs[j]); return f }
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fig(a), fig(b)) })
		if fig(order[0]) < fig(order[1]) {
			st.Best = &configs[order[0]]
		}
		ranked++
		seen := make([]bool, len(configs))
		for r := 0; r < len(order); {
			// Equal figures share the mean of their ranks r+1 .. e.
			e := r + 1
			for e < len(order) && fig(order[e]) == fig(order[r]) {
				e++
			}
			mean := float64(r+1+e) / 2
			for _, j := range order[r:e] {
				rankSum[j] += mean
				seen[j], figured[j] = true, true
			}
			r = e
		}
		for j := range configs {
			if !seen[j] {
				rankSum[j] += float64(len(configs))
			}
		}
	}
	if ranked == 0 {
		return nil
	}
	best, shared := -1, false
	for j := range configs {
		switch {
		case !figured[j]:
		case best < 0 || rankSum[j] < rankSum[best]:
			best, shared = j, false
		case rankSum[j] == rankSum[best]:
			shared = true
		}
	}
	if best < 0 || shared {
		return nil
	}
	return &configs[best]
}
