package sampling_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/sampling"
)

// The prior of a projection's spread (SimSpread as PriorWeight degrees
// of freedom) is fitted to the stored full runs, not chosen for the
// coverage it gives.
//
// A projection pools the relative spread of cycles per warp instruction
// over a plan's strata: one σ² for every stratum of a run, its prior a
// scaled inverse χ² of PriorWeight degrees of freedom and scale
// SimSpread², updated by the Σ(n_h − 1) degrees of freedom a sampled run
// measures (Project). Each stored full run has every launch's cycles, so
// its σ² is known: the one that makes the pooled variance of the
// default plan exact,
//
//	σ² = Σ_h w_h·S_h² / Σ_h w_h,  w_h = T_h²·(1 − n_h/N_h)/n_h,
//
// S_h² the relative variance of y/x among all N_h launches of stratum h
// and T_h their cycles. The prior that best explains the runs' σ² is the
// scaled inverse χ² of largest likelihood (empirical Bayes): for a given
// ν the scale is their harmonic mean, and ν maximises the likelihood.

// runSpread is σ² of fr: the pooled relative variance that makes the
// default plan's interval exact; one and more are the same pooled over
// its strata of one representative and of more (whose spread a sampled
// run measures).
func runSpread(t testing.TB, fr fullRun) (all, one, more float64) {
	p, err := sampling.STEM{Warmup: sampling.WarmupStep}.Plan(fr.in, sampling.Target{})
	if err != nil {
		t.Fatal(err)
	}
	var sw, swv, sw1, swv1 float64
	for _, st := range p.Strata {
		size, n := float64(len(st.Members)), float64(len(st.Representatives))
		if size <= n || size < 2 {
			continue
		}
		var sy, sx float64
		for _, i := range st.Members {
			sy += fr.cycles[i]
			sx += float64(fr.in.Launches[i].WarpInstructions)
		}
		ratio, ss := sy/sx, 0.0
		for _, i := range st.Members {
			d := fr.cycles[i]/float64(fr.in.Launches[i].WarpInstructions)/ratio - 1
			ss += d * d
		}
		w := sy * sy * (1 - n/size) / n
		sw += w
		swv += w * ss / (size - 1)
		if n == 1 {
			sw1 += w
			swv1 += w * ss / (size - 1)
		}
	}
	return swv / sw, swv1 / sw1, (swv - swv1) / (sw - sw1)
}

// fitPrior fits a scaled inverse χ²(ν, s²) to the variances v by
// maximum likelihood: s² their harmonic mean, ν over a grid to 1000.
func fitPrior(v []float64) (nu, s float64) {
	inv := 0.0
	for _, x := range v {
		inv += 1 / x
	}
	s2 := float64(len(v)) / inv
	best := math.Inf(-1)
	for n := 0.5; n <= 1000; n *= 1.01 {
		lg, _ := math.Lgamma(n / 2)
		ll := 0.0
		for _, x := range v {
			ll += n/2*math.Log(n*s2/2) - lg - (n/2+1)*math.Log(x) - n*s2/(2*x)
		}
		if ll > best {
			best, nu = ll, n
		}
	}
	return nu, math.Sqrt(s2)
}

// TestSpreadPrior fits the prior to every stored full run and checks
// SimSpread and PriorWeight are that fit (to the precision six runs give
// it); then, for each config, fits it to the other configs' runs alone
// and evaluates this config's plans with it (held out), logged beside
// the same plans with SimSpread and PriorWeight.
func TestSpreadPrior(t *testing.T) {
	runs := readFullRuns(t)
	var all []float64
	var configs []string
	for _, fr := range runs {
		v, one, more := runSpread(t, fr)
		all = append(all, v)
		t.Logf("%s: σ %.3f %% (strata of one representative %.3f %%, of more %.3f %%)", fr.name, 100*math.Sqrt(v), 100*math.Sqrt(one), 100*math.Sqrt(more))
		if !slices.Contains(configs, fr.config) {
			configs = append(configs, fr.config)
		}
	}
	nu, s := fitPrior(all)
	t.Logf("fitted to all %d runs: scale %.3f %%, %.1f degrees of freedom (SimSpread %.3f %%, PriorWeight %g)", len(runs), 100*s, nu, 100*sampling.SimSpread, float64(sampling.PriorWeight))
	if math.Abs(sampling.SimSpread/s-1) > 0.2 || float64(sampling.PriorWeight) < nu/2 || float64(sampling.PriorWeight) > 2*nu {
		t.Errorf("SimSpread %g and PriorWeight %g are not the prior fitted to the stored full runs (%.4f, %.1f): fit them again", sampling.SimSpread, float64(sampling.PriorWeight), s, nu)
	}
	if len(configs) < 2 {
		return
	}
	var heldOut calibration
	defer func() { t.Logf("every config held out: %s", &heldOut) }()
	for _, held := range configs {
		var train []float64
		var names []string
		for i, fr := range runs {
			if fr.config != held {
				train, names = append(train, all[i]), append(names, fr.name)
			}
		}
		nu, s := fitPrior(train)
		withFit := func(p sampling.Plan, in sampling.Input, full []float64) (sampling.Evaluation, error) {
			return sampling.EvaluateWithPrior(p, in, full, s, nu)
		}
		var this, constants calibration
		for _, fr := range runs {
			if fr.config != held {
				continue
			}
			var c calibration
			plans := distinctPlans(t, fr, floorTargets, seedRange(1, 1+calibrationSeeds))
			calibrate(t, fr, plans, withFit, &c, &this, &heldOut)
			calibrate(t, fr, plans, sampling.Evaluate, &constants)
			t.Logf("  %s, held out: %s", fr.name, &c)
		}
		t.Logf("%s held out, the prior fitted to %s (scale %.3f %%, %.1f degrees of freedom): %s", held, strings.Join(names, ", "), 100*s, nu, &this)
		t.Logf("%s with SimSpread and PriorWeight: %s", held, &constants)
	}
}
