package sampling_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// counted makes untimed launches of one kernel with the given warp
// instruction counts.
func counted(name string, grid int, insts ...int64) []sampling.Launch {
	out := launches(name, grid, make([]float64, len(insts))...)
	for i, n := range insts {
		out[i].WarpInstructions = n
	}
	return out
}

func TestSieve(t *testing.T) {
	for _, tt := range []struct {
		name   string
		in     sampling.Input
		target sampling.Target
		check  func(t *testing.T, in sampling.Input, p sampling.Plan)
	}{
		{"one launch", input(counted("k", 8, 5000)), sampling.Target{}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 1 || p.Samples != 1 || p.SimulatedFraction != 1 || p.ExpectedError != 0 || p.Total != 5000 {
				t.Fatalf("%+v", p)
			}
		}},
		{"identical counts", input(counted("a", 8, 700, 700, 700, 700), counted("b", 8, 300, 300)), sampling.Target{}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			// No spread of counts: the simulator's own (SimSpread) only.
			a, b := sampling.SimSpread*700, sampling.SimSpread*300
			want := 1.959963984540054 * math.Sqrt(16*0.75*a*a+4*0.5*b*b) / 3400
			if len(p.Strata) != 2 || p.Samples != 2 || math.Abs(p.ExpectedError-want) > 1e-12 || p.Estimate != p.Total || p.Total != 3400 {
				t.Fatalf("%d strata, %d samples, error %g, estimate %g, total %g", len(p.Strata), p.Samples, p.ExpectedError, p.Estimate, p.Total)
			}
			if w := p.Strata[0].Representatives[0].Weight; w != 4 {
				t.Fatalf("weight %g, want 4", w)
			}
		}},
		{"closest to the mean", input(counted("k", 8, 10, 20, 30, 28, 12)), sampling.Target{Error: 0.9}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			// Mean 20, CV 0.47 > 0.4: split into {10, 12} and {20, 28, 30}
			// (means 11 and 26), each represented by its launch closest
			// to its mean: 10 or 12 (equally close: the first, unless the
			// other is cheaper), and 28.
			if len(p.Strata) != 2 {
				t.Fatalf("%d strata, want 2", len(p.Strata))
			}
			lo, hi := p.Strata[0], p.Strata[1]
			if lo.Size != 2 || hi.Size != 3 || lo.MeanInstructions != 11 || hi.MeanInstructions != 26 {
				t.Fatalf("strata %+v", p.Strata)
			}
			if r := hi.Representatives[0]; r.Instructions != 28 || r.Launch != 3 {
				t.Fatalf("representative %+v, want launch 3 (28 instructions)", r)
			}
		}},
		{"outliers", input(counted("k", 8, append(repeatInt(1000, 50), 90000)...)), sampling.Target{}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 2 || p.Strata[0].Size != 50 || p.Strata[1].Size != 1 || p.Strata[1].Members[0] != 50 {
				t.Fatalf("strata %+v: the outlier is not a stratum of its own", p.Strata)
			}
			spread := sampling.SimSpread * 1000
			// The 50 have two representatives (for the spread).
			want := 1.959963984540054 * math.Sqrt(2500*(1-2.0/50)*spread*spread/2) / p.Total
			if math.Abs(p.ExpectedError-want) > 1e-12 || p.Estimate != p.Total {
				t.Fatalf("estimate %g, total %g, error %g", p.Estimate, p.Total, p.ExpectedError)
			}
		}},
		{"mixed grids", input(counted("k", 8, 100, 100), counted("k", 16, 100)), sampling.Target{}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 1 || p.Strata[0].Grid != nil || p.Strata[0].Block == nil {
				t.Fatalf("strata %+v: one stratum by name, no one grid", p.Strata)
			}
		}},
		{"timing ignored", input(launches("k", 8, 1000, 9000)), sampling.Target{}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if p.Basis != cascade.BasisInstructions || p.Total != 2000 || p.Samples != 1 {
				t.Fatalf("basis %s, total %g, samples %d", p.Basis, p.Total, p.Samples)
			}
			if s := p.Strata[0]; s.MeanDurationNs == nil || *s.MeanDurationNs != 5000 {
				t.Fatalf("stratum %+v: want its measured mean shown", s)
			}
		}},
		{"refined to the target", input(counted("k", 8, 100, 104, 108, 112, 116, 120, 124, 128)), sampling.Target{Error: 0.005}, func(t *testing.T, in sampling.Input, p sampling.Plan) {
			// CV 0.09, below 0.4: one stratum by the rule, expected error
			// 1.96·√(8·Σ(x−x̄)²)/Σx ≈ 6 %: split until at most 0.5 %.
			if len(p.Strata) < 3 || p.ExpectedError > 0.005 {
				t.Fatalf("%d strata, expected error %g: want it split to 0.5 %%", len(p.Strata), p.ExpectedError)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := sampling.Sieve{}.Plan(tt.in, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if p.Method != cascade.SamplingSieve {
				t.Fatalf("method %s", p.Method)
			}
			checkPlan(t, tt.in, p)
			for h, s := range p.Strata {
				// One a stratum; two in the largest, for the spread.
				if n := len(s.Representatives); n != 1 && (n != 2 || s.Size < 8) {
					t.Fatalf("stratum %d of %d launches: %d representatives", h, s.Size, n)
				}
			}
			tt.check(t, tt.in, p)
		})
	}
}

// TestSieveExpectedError: the expected error is 1.96·√V/total with V the
// stratified variance Σ N_h²(1 − n_h/N_h)(s_h² + (ρ·μ_h)²)/n_h of
// instruction counts, ρ the simulator's own spread (SimSpread).
func TestSieveExpectedError(t *testing.T) {
	in := input(counted("a", 8, 10, 11, 12, 13), counted("b", 8, 100, 130))
	p, err := sampling.Sieve{}.Plan(in, sampling.Target{Error: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, in, p)
	// a: N 4, s² = 5/3, μ 11.5; b: N 2, s² = 450, μ 115.
	ra, rb := sampling.SimSpread*11.5, sampling.SimSpread*115
	v := 16*(1-0.25)*(5.0/3+ra*ra) + 4*(1-0.5)*(450+rb*rb)
	want := 1.959963984540054 * math.Sqrt(v) / 276
	if len(p.Strata) != 2 || math.Abs(p.ExpectedError-want) > 1e-12 || math.Abs((p.CIHigh-p.CILow)/2-want*276) > 1e-9 {
		t.Fatalf("%d strata, expected error %g, interval [%g, %g]: want 2, %g", len(p.Strata), p.ExpectedError, p.CILow, p.CIHigh, want)
	}
}

func repeatInt(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
