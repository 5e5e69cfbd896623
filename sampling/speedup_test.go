package sampling_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade/sampling"
)

// variantOf is a variant's simulated cycles: each launch's baseline
// cycles divided by its kernel name's speedup, off by its own noise (a
// relative standard deviation): how a design change moves a launch that
// the baseline already placed.
func variantOf(in sampling.Input, base []sampling.Simulated, speedup map[string]float64, noise float64, rng interface{ NormFloat64() float64 }) []sampling.Simulated {
	out := make([]sampling.Simulated, len(base))
	for i, l := range in.Launches {
		s := speedup[l.Name]
		if s == 0 {
			s = 1
		}
		out[i] = sampling.Simulated{Cycles: base[i].Cycles / s * (1 + noise*rng.NormFloat64())}
	}
	return out
}

func total(all []sampling.Simulated) float64 {
	t := 0.0
	for _, s := range all {
		t += s.Cycles
	}
	return t
}

// TestProjectSpeedupCoverage: over 200 traces and plans (STEM at 5 %,
// the baseline's per-launch noise 3 %, the variant's own 1 %, kernels
// sped up by 0–20 %), the true speedup (of every launch's cycles) lies in
// the stated 95 % interval at least 90 % of the time, and the paired
// interval is narrower than the one the two totals' own intervals give
// (their errors are shared).
func TestProjectSpeedupCoverage(t *testing.T) {
	const trials = 200
	inside, narrower := 0, 0
	for seed := range uint64(trials) {
		rng := newRand(100 + seed)
		in := llmTrace(rng, 3000, 6, true)
		factor, speed := map[string]float64{}, map[string]float64{}
		for i, l := range in.Launches {
			if _, ok := factor[l.Name]; !ok {
				factor[l.Name] = 1 + float64(i%5)
				speed[l.Name] = 1 + 0.2*rng.Float64()
			}
		}
		base := simulate(in, factor, 0.03, rng)
		variant := variantOf(in, base, speed, 0.01, rng)
		p, err := sampling.STEM{}.Plan(in, sampling.Target{Error: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sampling.ProjectSpeedup(p, in, ofRepresentatives(p, base), ofRepresentatives(p, variant))
		if err != nil {
			t.Fatal(err)
		}
		truth := total(base) / total(variant)
		if s.Low <= truth && truth <= s.High {
			inside++
		}
		pb, _ := sampling.Project(p, in, ofRepresentatives(p, base))
		pv, _ := sampling.Project(p, in, ofRepresentatives(p, variant))
		independent := s.Ratio * math.Hypot(pb.Error, pv.Error)
		if (s.High-s.Low)/2 < independent {
			narrower++
		}
	}
	if inside < trials*90/100 {
		t.Errorf("the true speedup was inside the interval in %d of %d trials, want at least 90 %%", inside, trials)
	}
	if narrower < trials*95/100 {
		t.Errorf("the paired interval was narrower than the independent one in %d of %d trials", narrower, trials)
	}
	t.Logf("coverage %d/%d, narrower %d/%d", inside, trials, narrower, trials)
}

// TestProjectSpeedupSignificance: a variant that changes nothing is not
// significantly faster, one 2 % faster everywhere is; the ratio of two
// exact projections is exact.
func TestProjectSpeedupSignificance(t *testing.T) {
	rng := newRand(7)
	in := llmTrace(rng, 3000, 6, true)
	factor := map[string]float64{}
	same, faster := map[string]float64{}, map[string]float64{}
	for _, l := range in.Launches {
		factor[l.Name], same[l.Name], faster[l.Name] = 2, 1, 1.02
	}
	base := simulate(in, factor, 0.03, rng)
	p, err := sampling.STEM{}.Plan(in, sampling.Target{Error: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		speed map[string]float64
		noise float64
		sig   bool
	}{{same, 0.005, false}, {faster, 0.005, true}} {
		v := variantOf(in, base, tc.speed, tc.noise, rng)
		s, err := sampling.ProjectSpeedup(p, in, ofRepresentatives(p, base), ofRepresentatives(p, v))
		if err != nil {
			t.Fatal(err)
		}
		if s.Significant != tc.sig || !(s.Low <= s.Ratio && s.Ratio <= s.High) {
			t.Errorf("speedup %+v of a variant %v faster: want significant %v", s, tc.speed[in.Launches[0].Name], tc.sig)
		}
	}
	exact := variantOf(in, base, faster, 0, rng)
	s, _ := sampling.ProjectSpeedup(p, in, ofRepresentatives(p, base), ofRepresentatives(p, exact))
	if math.Abs(s.Ratio-1.02) > 1e-9 || s.High-s.Low > 1e-9 {
		t.Errorf("exact 1.02 speedup: %+v", s)
	}
}
