package sampling

import (
	"fmt"
	"math"
)

// Simulated is what simulating one launch gave: its cycles and its
// per-kernel statistics (every launch's in the same order).
type Simulated struct {
	Cycles float64
	Stats  []float64
}

// Projection is a plan's representatives' simulated results projected
// onto every launch of the trace.
type Projection struct {
	// Cycles are the projected cycles of each launch, by position.
	Cycles []float64
	// Total is their sum, and [Low, High] its 95 % confidence interval;
	// Error is the interval's half-width relative to Total:
	// SamplingError, of the representatives' spread, plus WarmupError,
	// the plan's warm-up allowance (WarmupAllowance).
	Total         float64
	Low, High     float64
	Error         float64
	SamplingError float64
	WarmupError   float64
	// Stats are the projected totals of the statistics; nil when the
	// representatives gave none.
	Stats []float64

	stratumOf []int32     // per launch: its stratum
	perCycle  [][]float64 // per stratum: each statistic per projected cycle
	meanStats [][]float64 // per stratum: each statistic's mean (its cycles were 0)
}

// LaunchStats returns launch i's projected statistics (a new slice).
func (pr *Projection) LaunchStats(i int) []float64 {
	if pr.Stats == nil || i < 0 || i >= len(pr.stratumOf) {
		return nil
	}
	h := pr.stratumOf[i]
	out := make([]float64, len(pr.Stats))
	for k := range out {
		if pr.perCycle[h] != nil {
			out[k] = pr.perCycle[h][k] * pr.Cycles[i]
		} else {
			out[k] = pr.meanStats[h][k]
		}
	}
	return out
}

// Project projects the simulated results of a plan's representatives,
// sim by launch position, onto every launch of in, the input the plan
// was made from (its Members must be there, as a store reads them).
//
// Within a stratum, a launch's cycles are its warp instructions x times
// the stratum's ratio R = Σy/Σx over its simulated representatives: a
// ratio estimator, which corrects for how far the representatives' work
// is from their stratum's. It is on the work the simulator simulates,
// never on the measured duration a plan stratifies by: a measured
// duration is off by the GPU's timing noise, which the simulator does
// not see, and a projection that followed it would copy the noise into
// every projected launch (and make a sampled run's kernels agree with
// the measured ones by construction). A stratum whose representatives' x
// sum to 0, or an empty in, takes their mean cycles ȳ for each launch.
// Statistics scale with a launch's cycles.
//
// The interval is the stratified one, on the model a plan's expected
// error is computed on: variance Σ_h T_h²·ρ²·(1 − m_h/N_h)/m_h over
// strata of N_h launches, m_h of them simulated, projected total T_h.
// For a ratio stratum ρ² is pooled over the plan: the relative variance
// of y/x within each stratum of two or more simulated launches, about
// its own Σy/Σx, with SimSpread² counting as PriorWeight degrees of
// freedom (a plan gives a run MinSpreadDF of its own); the quantile is
// Student's t at those degrees of freedom. A stratum projected by its
// mean ȳ takes its own relative variance of y, or, with one simulated
// launch, its plan's coefficient of variation. A representative sim
// lacks is left out (m_h counts those simulated); a stratum with none is
// an error. To that half-width it adds the plan's warm-up allowance
// for cold segments (WarmupAllowance(p, Cold)): a representative
// simulated after its warm-up, not after every launch before it, runs
// off its in-context cycles the same way for all, which no spread among
// them shows. ProjectWith states the allowance of segments whose L2 was
// warmed.
func Project(p Plan, in Input, sim map[int]Simulated) (Projection, error) {
	return ProjectWith(p, in, sim, Cold)
}

// ProjectWith is Project for segments that started as w says: its
// interval's warm-up allowance is WarmupAllowance(p, w).
func ProjectWith(p Plan, in Input, sim map[int]Simulated, w Warming) (Projection, error) {
	return project(p, in, sim, w, defaultPrior)
}

// spreadPrior is the prior of a projection's pooled relative spread:
// spread² counting as weight degrees of freedom.
type spreadPrior struct{ spread, weight float64 }

// defaultPrior is SimSpread as PriorWeight degrees of freedom.
var defaultPrior = spreadPrior{SimSpread, PriorWeight}

func project(p Plan, in Input, sim map[int]Simulated, w Warming, prior spreadPrior) (Projection, error) {
	pr := Projection{Cycles: make([]float64, p.Launches), stratumOf: make([]int32, p.Launches)}
	ratioMode := len(in.Launches) > 0
	if ratioMode && len(in.Launches) != p.Launches {
		return pr, fmt.Errorf("project: the input has %d launches, the plan %d", len(in.Launches), p.Launches)
	}
	nStats := -1
	type stratumFit struct {
		m        int
		sy, sx   float64 // of the simulated representatives
		ratio    bool    // y = R·x, else y = ȳ
		own      float64 // relative variance among its simulated launches; NaN with < 2
		name     string
		prior    float64
		projTot  float64
		size     int
		statSums []float64
	}
	fits := make([]stratumFit, len(p.Strata))
	for h := range p.Strata {
		st := &p.Strata[h]
		f := &fits[h]
		f.name, f.size = st.Name, len(st.Members)
		f.prior = st.CVInstructions
		if st.CVDuration != nil {
			f.prior = *st.CVDuration
		}
		x := func(i int) float64 { return workOf(in, i) }
		for _, r := range st.Representatives {
			s, ok := sim[r.Launch]
			if !ok {
				continue
			}
			if r.Launch < 0 || r.Launch >= p.Launches {
				return pr, fmt.Errorf("project: representative %d is not a launch of the plan", r.Launch)
			}
			if nStats < 0 {
				nStats = len(s.Stats)
			} else if len(s.Stats) != nStats {
				return pr, fmt.Errorf("project: launch %d has %d statistics, others %d", r.Launch, len(s.Stats), nStats)
			}
			if f.statSums == nil && nStats > 0 {
				f.statSums = make([]float64, nStats)
			}
			for k, v := range s.Stats {
				f.statSums[k] += v
			}
			f.m++
			f.sy += s.Cycles
			f.sx += x(r.Launch)
		}
		if f.m == 0 {
			return pr, fmt.Errorf("project: stratum %d (%s, %d launches): none of its %d representatives was simulated",
				h, st.Name, len(st.Members), len(st.Representatives))
		}
		f.ratio = ratioMode && f.sx > 0
		sumX := 0.0
		for _, i := range st.Members {
			if int(i) >= p.Launches {
				return pr, fmt.Errorf("project: stratum %d: launch %d is not a launch of the plan", h, i)
			}
			pr.stratumOf[i] = int32(h)
			if f.ratio {
				xi := x(int(i))
				sumX += xi
				pr.Cycles[i] = f.sy / f.sx * xi
			} else {
				pr.Cycles[i] = f.sy / float64(f.m)
			}
		}
		if f.ratio {
			f.projTot = f.sy / f.sx * sumX
		} else {
			f.projTot = f.sy / float64(f.m) * float64(len(st.Members))
		}
		pr.Total += f.projTot
		// The relative variance among the stratum's simulated launches.
		f.own = math.NaN()
		if f.m >= 2 {
			center := f.sy / float64(f.m)
			if f.ratio {
				center = f.sy / f.sx
			}
			ss := 0.0
			for _, r := range st.Representatives {
				s, ok := sim[r.Launch]
				if !ok || center == 0 {
					continue
				}
				v := s.Cycles
				if f.ratio {
					if xr := x(r.Launch); xr > 0 {
						v /= xr
					} else {
						continue
					}
				}
				d := v/center - 1
				ss += d * d
			}
			f.own = ss / float64(f.m-1)
		}
	}

	// Pooled: the spread of y/x within each stratum of two or more
	// simulated launches, with SimSpread as PriorWeight degrees of
	// freedom of prior.
	pooled, spreadDF := math.NaN(), math.Inf(1)
	if ratioMode {
		ss, df := prior.weight*prior.spread*prior.spread, prior.weight
		for h := range fits {
			if f := &fits[h]; f.ratio && !math.IsNaN(f.own) {
				ss += f.own * float64(f.m-1)
				df += float64(f.m - 1)
			}
		}
		pooled, spreadDF = ss/df, df
	}

	variance := 0.0
	pr.perCycle = make([][]float64, len(p.Strata))
	pr.meanStats = make([][]float64, len(p.Strata))
	if nStats > 0 {
		pr.Stats = make([]float64, nStats)
	}
	for h := range fits {
		f := &fits[h]
		rho2 := math.NaN()
		switch {
		case f.ratio:
			rho2 = pooled
		case !math.IsNaN(f.own):
			rho2 = f.own
		}
		if math.IsNaN(rho2) {
			rho2 = f.prior * f.prior
		}
		n, size := float64(f.m), float64(f.size)
		if size > n {
			variance += f.projTot * f.projTot * rho2 * (1 - n/size) / n
		}
		if nStats > 0 {
			if f.sy != 0 {
				pc := make([]float64, nStats)
				for k := range pc {
					pc[k] = f.statSums[k] / f.sy
					pr.Stats[k] += pc[k] * f.projTot
				}
				pr.perCycle[h] = pc
			} else {
				ms := make([]float64, nStats)
				for k := range ms {
					ms[k] = f.statSums[k] / n
					pr.Stats[k] += ms[k] * size
				}
				pr.meanStats[h] = ms
			}
		}
	}
	sampled := tQuantile95(spreadDF) * math.Sqrt(variance)
	pr.WarmupError = WarmupAllowance(p, w)
	half := sampled + pr.WarmupError*math.Abs(pr.Total)
	pr.Low, pr.High = pr.Total-half, pr.Total+half
	if pr.Total != 0 {
		pr.Error = half / math.Abs(pr.Total)
		pr.SamplingError = sampled / math.Abs(pr.Total)
	}
	return pr, nil
}

// workOf is launch i's x in a projection: its warp instructions; 0
// without an input.
func workOf(in Input, i int) float64 {
	if len(in.Launches) == 0 {
		return 0
	}
	return float64(in.Launches[i].instructions())
}

// tQuantile95 is the two-sided 95 % quantile of Student's t with df
// degrees of freedom (z95 for +Inf): the Cornish-Fisher expansion around
// the normal's, within 1 % of the exact value from 3 degrees of
// freedom up (3.159 for 3.182, 2.228 at 10).
func tQuantile95(df float64) float64 {
	z := z95
	if math.IsInf(df, 1) {
		return z
	}
	df = max(df, 3)
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z + (z3+z)/(4*df) + (5*z5+16*z3+3*z)/(96*df*df) + (3*z7+19*z5+17*z3-15*z)/(384*df*df*df)
}

// Warming is how the segments of a sampled run started.
type Warming int

const (
	// Cold: each segment started with the simulator's caches empty, its
	// warm-up launches all it had of the launches before it.
	Cold Warming = iota
	// L2Warmed: each segment that launches before it touched lines of
	// had them put in L2 first (accelsim/l2warm, as the server does for
	// every segment), or started as the full simulation does (at the
	// trace's first launch, or under a config that empties L2 between
	// kernels).
	L2Warmed
)

// The warm-up allowances, relative to the projected total: how far a
// sampled run's total was off its full run's on the real Accel-Sim for
// want of the caches' state, the representatives all off the same way
// (docs/sampling-benchmarks.md, "Sampled simulation"), rounded up to the next
// half percent so that every error measured lies inside.
//
// After a step of the program, segments cold: +0.39 % and +0.24 %
// (decode48, SM6_TITANX and SM7_QV100), +0.79 % and +2.28 % (layers3),
// +1.01 % (noisy), +0.24 % (CI's trace), −0.03 % (the default shape):
// 2.5 %. The same plans with each segment's L2 warmed (accelsim/l2warm):
// +0.30 %, +0.08 %, +0.26 %, +0.32 %, −0.07 %, +0.15 % (decode48, layers3,
// noisy on both configs): 0.5 %; with the smallest sampling half-width
// of those plans evaluated against their full runs (0.14 %,
// TestCalibration) a stated half-width is 0.64 % at least, beyond 0.59 %,
// the 95 % prediction bound of another such run's error from these six
// (mean + t₅·sd·√(1 + 1/6)). After 1 to 6 launches 1.4–3.0 %, after none
// 2–3 %, both measured cold and not since: 3 % and 4 %, warmed or not.
const (
	WarmupAllowanceStep       = 0.025
	WarmupAllowanceStepWarmed = 0.005
	WarmupAllowanceLaunches   = 0.03
	WarmupAllowanceNone       = 0.04
)

// WarmupAllowance is the allowance for p's warm-up, its segments started
// as w says: a step of the program (or as many launches), fewer
// launches, or none; plus, on a plan with warm-up, WarmupAllowanceNone of
// the share of the trace's warp instructions its representatives without
// warm-up project (a census of one small launch goes without: warmFor),
// those at a trace's first launch aside, which start as the full run does.
func WarmupAllowance(p Plan, w Warming) float64 {
	switch {
	case p.WarmupStep && w == L2Warmed:
		return WarmupAllowanceStepWarmed + coldShare(p)*WarmupAllowanceNone
	case p.WarmupStep:
		return WarmupAllowanceStep + coldShare(p)*WarmupAllowanceNone
	case p.Warmup == 0:
		return WarmupAllowanceNone
	}
	return WarmupAllowanceLaunches + coldShare(p)*WarmupAllowanceNone
}

// coldShare is the share of p's warp instructions that representatives
// simulated without warm-up after other launches project.
func coldShare(p Plan) float64 {
	if p.Instructions <= 0 {
		return 0
	}
	cold := 0.0
	for _, st := range p.Strata {
		for _, r := range st.Representatives {
			if r.Launch > 0 && len(r.Warmup) == 0 {
				cold += r.Weight * float64(r.Instructions)
			}
		}
	}
	return cold / float64(p.Instructions)
}
