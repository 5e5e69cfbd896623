package sampling

import (
	"fmt"
	"math"
)

// Speedup is how much faster one variant is than a baseline, in cycles,
// both sampled runs of one plan: Ratio = the baseline's projected total
// over the variant's, and [Low, High] its 95 % confidence interval.
type Speedup struct {
	Ratio     float64
	Low, High float64
	// Significant reports whether the interval excludes 1: only then does
	// it say which of the two is faster.
	Significant bool
}

// ProjectSpeedup is the speedup of variant over base, two sampled runs of
// plan p (their representatives' results by launch position, as for
// [Project]), with an interval that counts what the two share: the same
// representatives stand for the same launches under both, so the error a
// representative brings to both totals largely cancels in their ratio.
//
// Its interval comes from the spread of the per-launch speedups: by the
// delta method, the relative variance of Tb/Tv is Σ_h w_h²·σ_h²·(1 −
// m_h/N_h)/m_h over strata, where w_h is stratum h's share of the
// variant's projected total and σ_h² the relative variance, among its m_h
// representatives simulated under both, of yb/yv (a launch's speedup)
// around the stratum's Σyb/Σyv. A stratum with one such representative
// takes the pooled relative variance of every representative's speedup
// against its kernel name's, as [Project] does; with none anywhere, 0 (a
// plan whose every stratum has one launch simulated and no kernel name
// two: every launch simulated that could be). Only representatives
// simulated under both runs count.
func ProjectSpeedup(p Plan, in Input, base, variant map[int]Simulated) (Speedup, error) {
	pb, err := Project(p, in, base)
	if err != nil {
		return Speedup{}, fmt.Errorf("baseline: %w", err)
	}
	pv, err := Project(p, in, variant)
	if err != nil {
		return Speedup{}, fmt.Errorf("variant: %w", err)
	}
	if pv.Total <= 0 || pb.Total <= 0 {
		return Speedup{}, fmt.Errorf("speedup: a projected total is %g", math.Min(pb.Total, pv.Total))
	}
	ratio := pb.Total / pv.Total

	type pair struct{ b, v float64 }
	type fit struct {
		pairs    []pair
		sb, sv   float64
		size     int
		name     string
		variantT float64 // its share of the variant's total, in cycles
	}
	fits := make([]fit, len(p.Strata))
	for h, st := range p.Strata {
		f := &fits[h]
		f.size, f.name = len(st.Members), st.Name
		for _, r := range st.Representatives {
			b, okB := base[r.Launch]
			v, okV := variant[r.Launch]
			if !okB || !okV || b.Cycles <= 0 || v.Cycles <= 0 {
				continue
			}
			f.pairs = append(f.pairs, pair{b.Cycles, v.Cycles})
			f.sb += b.Cycles
			f.sv += v.Cycles
		}
		for _, i := range st.Members {
			if int(i) < len(pv.Cycles) {
				f.variantT += pv.Cycles[i]
			}
		}
	}
	relVar := func(ps []pair, center float64) (float64, int) {
		ss := 0.0
		for _, q := range ps {
			d := q.b/q.v/center - 1
			ss += d * d
		}
		return ss, len(ps) - 1
	}
	// Pooled over kernel names.
	type sums struct {
		sb, sv float64
		pairs  []pair
	}
	byName := map[string]*sums{}
	for _, f := range fits {
		s := byName[f.name]
		if s == nil {
			s = &sums{}
			byName[f.name] = s
		}
		s.sb += f.sb
		s.sv += f.sv
		s.pairs = append(s.pairs, f.pairs...)
	}
	poolSS, poolDF := 0.0, 0
	for _, s := range byName {
		if len(s.pairs) >= 2 && s.sv > 0 {
			ss, df := relVar(s.pairs, s.sb/s.sv)
			poolSS, poolDF = poolSS+ss, poolDF+df
		}
	}
	pooled := 0.0
	if poolDF > 0 {
		pooled = poolSS / float64(poolDF)
	}
	variance := 0.0
	for _, f := range fits {
		m := len(f.pairs)
		if m == 0 || f.size <= m || pv.Total == 0 {
			continue
		}
		sigma2 := pooled
		if m >= 2 && f.sv > 0 {
			ss, df := relVar(f.pairs, f.sb/f.sv)
			sigma2 = math.Max(ss/float64(df), pooled)
		}
		w := f.variantT / pv.Total
		variance += w * w * sigma2 * (1 - float64(m)/float64(f.size)) / float64(m)
	}
	half := z95 * math.Sqrt(variance) * ratio
	s := Speedup{Ratio: ratio, Low: ratio - half, High: ratio + half}
	s.Significant = s.Low > 1 || s.High < 1
	return s, nil
}
