package sampling_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// simulate gives each launch's "simulated" cycles: its warp instructions
// times its kernel's factor, off by noise (a relative standard
// deviation), as a simulator's per-launch spread would be; stats are 2
// and 0.5 per cycle.
func simulate(in sampling.Input, factor map[string]float64, noise float64, rng interface{ NormFloat64() float64 }) []sampling.Simulated {
	out := make([]sampling.Simulated, len(in.Launches))
	for i, l := range in.Launches {
		x := float64(l.WarpInstructions)
		y := x * factor[l.Name] * (1 + noise*rng.NormFloat64())
		out[i] = sampling.Simulated{Cycles: y, Stats: []float64{2 * y, 0.5 * y}}
	}
	return out
}

// ofRepresentatives keeps the simulated results of p's representatives.
func ofRepresentatives(p sampling.Plan, all []sampling.Simulated) map[int]sampling.Simulated {
	sim := map[int]sampling.Simulated{}
	for _, s := range p.Strata {
		for _, r := range s.Representatives {
			sim[r.Launch] = all[r.Launch]
		}
	}
	return sim
}

// TestProjectExact: simulated cycles proportional to the basis project
// every launch exactly, with an interval of no width; statistics follow.
func TestProjectExact(t *testing.T) {
	for _, tt := range []struct {
		m     sampling.Method
		timed bool // the basis: durations, else instructions
	}{{sampling.STEM{}, true}, {sampling.Sieve{}, false}} {
		in := llmTrace(newRand(9), 5000, 8, tt.timed)
		factor := map[string]float64{}
		for i, l := range in.Launches {
			factor[l.Name] = 1 + float64(i%7)
		}
		all := simulate(in, factor, 0, newRand(1))
		p, err := tt.m.Plan(in, sampling.Target{Error: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := sampling.Project(p, in, ofRepresentatives(p, all))
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for i, s := range all {
			total += s.Cycles
			if math.Abs(pr.Cycles[i]-s.Cycles) > 1e-9*s.Cycles {
				t.Fatalf("%s: launch %d projected %g cycles, simulated %g", p.Method, i, pr.Cycles[i], s.Cycles)
			}
			if st := pr.LaunchStats(i); math.Abs(st[0]-2*s.Cycles) > 1e-9*s.Cycles || math.Abs(st[1]-0.5*s.Cycles) > 1e-9*s.Cycles {
				t.Fatalf("%s: launch %d stats %v, want %g, %g", p.Method, i, st, 2*s.Cycles, 0.5*s.Cycles)
			}
		}
		// The spread measured is 0; the interval is the prior's
		// (SimSpread, PriorWeight degrees of freedom among
		// PriorWeight + MinSpreadDF), plus the cold segments' warm-up
		// allowance.
		if math.Abs(pr.Total-total) > 1e-9*total || pr.SamplingError <= 0 || pr.SamplingError > sampling.SimSpread ||
			math.Abs(pr.Error-pr.SamplingError-sampling.WarmupAllowance(p, sampling.Cold)) > 1e-12 {
			t.Fatalf("%s: total %g in [%g, %g], want %g exactly", p.Method, pr.Total, pr.Low, pr.High, total)
		}
		// Warmed segments: the same projection, their allowance.
		pw, err := sampling.ProjectWith(p, in, ofRepresentatives(p, all), sampling.L2Warmed)
		if err != nil {
			t.Fatal(err)
		}
		if pw.Total != pr.Total || pw.SamplingError != pr.SamplingError || pw.WarmupError != sampling.WarmupAllowance(p, sampling.L2Warmed) {
			t.Fatalf("%s: warmed: total %g ±%g (sampling %g), want %g ±%g + %g", p.Method, pw.Total, pw.Error, pw.SamplingError,
				pr.Total, pr.SamplingError, sampling.WarmupAllowance(p, sampling.L2Warmed))
		}
		if math.Abs(pr.Stats[0]-2*total) > 1e-9*total || math.Abs(pr.Stats[1]-0.5*total) > 1e-9*total {
			t.Fatalf("%s: stat totals %v, want %g, %g", p.Method, pr.Stats, 2*total, 0.5*total)
		}
	}
}

// TestProjectByHand: a plan of two strata, worked out by hand: the ratio
// estimator, the mean without an input, and the interval.
func TestProjectByHand(t *testing.T) {
	in := input(counted("a", 8, 100, 200, 300), counted("b", 8, 1000))
	p := sampling.Plan{Method: cascade.SamplingSieve, Basis: cascade.BasisInstructions, Launches: 4, Strata: []cascade.SamplingStratum{
		{Name: "a", Size: 3, Members: []int32{0, 1, 2}, CVInstructions: 0.5,
			Representatives: []cascade.SamplingRepresentative{{Launch: 1, Weight: 3}}},
		{Name: "b", Size: 1, Members: []int32{3},
			Representatives: []cascade.SamplingRepresentative{{Launch: 3, Weight: 1}}},
	}}
	sim := map[int]sampling.Simulated{1: {Cycles: 400}, 3: {Cycles: 50}}
	pr, err := sampling.Project(p, in, sim)
	if err != nil {
		t.Fatal(err)
	}
	// a: R = 400/200 = 2, so 200, 400, 600; b: 50. No stratum has two
	// simulated launches: a's spread is the prior's alone, SimSpread² as
	// PriorWeight (10.9) degrees of freedom, variance
	// 1200²·SimSpread²·(1 − 1/3)/1, and the quantile t's at 10.9 degrees
	// of freedom (about 2.20 between t₁₀'s 2.228 and t₁₁'s 2.201; 2.2033
	// by tQuantile95's expansion).
	if want := []float64{200, 400, 600, 50}; !equal(pr.Cycles, want) || pr.Total != 1250 {
		t.Fatalf("cycles %v, total %g; want %v, 1250", pr.Cycles, pr.Total, want)
	}
	// Plus the warm-up allowance: the plan has no warm-up.
	half := 2.203333538011707*math.Sqrt(1200*1200*sampling.SimSpread*sampling.SimSpread*2/3) + sampling.WarmupAllowanceNone*1250
	if math.Abs(pr.High-1250-half) > 1e-9 || math.Abs(1250-pr.Low-half) > 1e-9 || pr.Stats != nil {
		t.Fatalf("interval [%g, %g], want 1250 ± %g", pr.Low, pr.High, half)
	}

	// Without the input: each launch its stratum's mean, 400 and 50.
	pr, err = sampling.Project(p, sampling.Input{}, sim)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{400, 400, 400, 50}; !equal(pr.Cycles, want) || pr.Total != 1250 {
		t.Fatalf("without the input: cycles %v, total %g; want %v, 1250", pr.Cycles, pr.Total, want)
	}

	// A stratum none of whose representatives was simulated.
	if _, err := sampling.Project(p, in, map[int]sampling.Simulated{1: {Cycles: 400}}); err == nil {
		t.Fatal("projected with b's representative missing")
	}
	// Statistics of different lengths.
	if _, err := sampling.Project(p, in, map[int]sampling.Simulated{1: {Cycles: 1, Stats: []float64{1}}, 3: {Cycles: 1}}); err == nil {
		t.Fatal("projected statistics of different lengths")
	}
}

// TestWarmupAllowance: a step of warm-up is allowed less when the
// segments' L2 was warmed; fewer launches and none, measured cold only,
// keep theirs.
func TestWarmupAllowance(t *testing.T) {
	for _, tt := range []struct {
		p            sampling.Plan
		cold, warmed float64
	}{
		{sampling.Plan{Warmup: 6, WarmupStep: true}, 0.025, 0.005},
		{sampling.Plan{Warmup: 3}, 0.03, 0.03},
		{sampling.Plan{Warmup: 0}, 0.04, 0.04},
		// A representative of 1 % of the instructions simulated without
		// its warm-up adds 4 % of 1 %; the trace's first launch nothing.
		{sampling.Plan{Warmup: 6, WarmupStep: true, Instructions: 10000, Strata: []cascade.SamplingStratum{
			{Representatives: []cascade.SamplingRepresentative{{Launch: 0, Weight: 1, Instructions: 500}}},
			{Representatives: []cascade.SamplingRepresentative{{Launch: 40, Weight: 1, Instructions: 100}}},
			{Representatives: []cascade.SamplingRepresentative{{Launch: 41, Weight: 3, Instructions: 1000,
				Warmup: []cascade.SamplingLaunch{{Launch: 40}}}}},
		}}, 0.025 + 0.0004, 0.005 + 0.0004},
	} {
		if c, w := sampling.WarmupAllowance(tt.p, sampling.Cold), sampling.WarmupAllowance(tt.p, sampling.L2Warmed); math.Abs(c-tt.cold) > 1e-12 || math.Abs(w-tt.warmed) > 1e-12 {
			t.Errorf("warm-up %d (step %v): allowance %g cold, %g warmed; want %g, %g", tt.p.Warmup, tt.p.WarmupStep, c, w, tt.cold, tt.warmed)
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Abs(b[i]) {
			return false
		}
	}
	return true
}

// TestCoverage: over 200 random traces (a fixed seed), simulated with a
// per-launch error of 10 % around each kernel's own ratio to the basis,
// the projected total's 95 % interval holds the total of every launch's
// simulated cycles at least 90 % of the time, and is not vacuously wide;
// a Sieve plan's own interval holds the total of instructions as often.
func TestCoverage(t *testing.T) {
	const draws = 200
	rng := newRand(2025)
	for _, tt := range []struct {
		method sampling.Method
		timed  bool
		// basisCI: the plan's interval is one of its basis (Sieve's,
		// instructions); STEM's counts a tenth of the durations'
		// spread (TimingWeight), a model of the simulator's.
		basisCI bool
	}{{sampling.STEM{}, true, false}, {sampling.Sieve{}, false, true}} {
		covered, planCovered := 0, 0
		sumErr, sumSq := 0.0, 0.0
		for range draws {
			in := llmTrace(rng, 3000, 6, tt.timed)
			factor := map[string]float64{}
			for _, l := range in.Launches {
				if _, ok := factor[l.Name]; !ok {
					factor[l.Name] = 0.5 + rng.Float64()
				}
			}
			all := simulate(in, factor, 0.1, rng)
			p, err := tt.method.Plan(in, sampling.Target{Error: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			pr, err := sampling.Project(p, in, ofRepresentatives(p, all))
			if err != nil {
				t.Fatal(err)
			}
			truth := 0.0
			for _, s := range all {
				truth += s.Cycles
			}
			if pr.Low <= truth && truth <= pr.High {
				covered++
			}
			if p.CILow <= p.Total && p.Total <= p.CIHigh || !tt.basisCI {
				planCovered++
			}
			sumErr += pr.Error
			off := (pr.Total - truth) / truth
			sumSq += off * off
		}
		rms, width := math.Sqrt(sumSq/draws), sumErr/draws
		t.Logf("%T: covered %d of %d, plan's interval %d; mean half-width %.3g %%, rms error %.3g %%", tt.method, covered, draws, planCovered, 100*width, 100*rms)
		if covered < draws*9/10 || planCovered < draws*9/10 {
			t.Fatalf("%T: the interval holds the total %d times of %d, the plan's %d: want at least 90 %%", tt.method, covered, draws, planCovered)
		}
		if width > 4*1.96*rms {
			t.Fatalf("%T: mean half-width %.3g %% for an rms error of %.3g %%: vacuously wide", tt.method, 100*width, 100*rms)
		}
	}
}
