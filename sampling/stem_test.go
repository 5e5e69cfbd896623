package sampling_test

import (
	"math"
	"regexp"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// launches makes launches of one kernel (name, a 1-D grid), with the
// given durations (0: none measured) and 1000 warp instructions each.
func launches(name string, grid int, durations ...float64) []sampling.Launch {
	out := make([]sampling.Launch, len(durations))
	for i, d := range durations {
		out[i] = sampling.Launch{Name: name, Grid: cascade.Dim3{X: grid, Y: 1, Z: 1}, Block: cascade.Dim3{X: 128, Y: 1, Z: 1},
			WarpInstructions: 1000, DurationNs: d}
	}
	return out
}

// input numbers the launches' kernel ids from 1, in order.
func input(parts ...[]sampling.Launch) sampling.Input {
	var in sampling.Input
	for _, p := range parts {
		in.Launches = append(in.Launches, p...)
	}
	for i := range in.Launches {
		in.Launches[i].KernelID = i + 1
	}
	return in
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// checkPlan checks what every plan must be: strata partition the
// launches, each has 1 to Size representatives among its members whose
// weights sum to its size, each representative's warm-up is the launches
// just before it, and the figures add up.
func checkPlan(t *testing.T, in sampling.Input, p sampling.Plan) {
	t.Helper()
	seen := make([]bool, len(in.Launches))
	samples := 0
	sim := map[int]bool{}
	for h, s := range p.Strata {
		if s.Size != len(s.Members) || s.Size == 0 {
			t.Fatalf("stratum %d: size %d, %d members", h, s.Size, len(s.Members))
		}
		if !slices.IsSorted(s.Members) {
			t.Fatalf("stratum %d: members not ascending", h)
		}
		for _, i := range s.Members {
			if seen[i] {
				t.Fatalf("launch %d in two strata", i)
			}
			seen[i] = true
			if in.Launches[i].Name != s.Name {
				t.Fatalf("stratum %d (%s) holds launch %d of %s", h, s.Name, i, in.Launches[i].Name)
			}
		}
		if n := len(s.Representatives); n < 1 || n > s.Size {
			t.Fatalf("stratum %d: %d representatives of %d", h, n, s.Size)
		}
		weights := 0.0
		for _, r := range s.Representatives {
			if _, ok := slices.BinarySearch(s.Members, int32(r.Launch)); !ok {
				t.Fatalf("stratum %d: representative %d is not a member", h, r.Launch)
			}
			if r.KernelID != in.Launches[r.Launch].KernelID {
				t.Fatalf("representative %d: kernel id %d, want %d", r.Launch, r.KernelID, in.Launches[r.Launch].KernelID)
			}
			weights += r.Weight
			sim[r.Launch] = true
			for k, w := range r.Warmup {
				if want := r.Launch - len(r.Warmup) + k; w.Launch != want {
					t.Fatalf("representative %d: warm-up %v, want the launches just before it", r.Launch, r.Warmup)
				}
				if in.Launches[w.Launch].Context != in.Launches[r.Launch].Context {
					t.Fatalf("representative %d: warm-up %d is of another context", r.Launch, w.Launch)
				}
				sim[w.Launch] = true
			}
		}
		if math.Abs(weights-float64(s.Size)) > 1e-9*float64(s.Size) {
			t.Fatalf("stratum %d: weights sum to %g, size %d", h, weights, s.Size)
		}
		samples += len(s.Representatives)
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("launch %d in no stratum", i)
		}
	}
	insts, all := int64(0), int64(0)
	for i := range sim {
		insts += in.Launches[i].WarpInstructions
	}
	for _, l := range in.Launches {
		all += l.WarpInstructions
	}
	if p.Samples != samples || p.SimulatedLaunches != len(sim) || p.SimulatedInstructions != insts || p.Launches != len(in.Launches) || p.Instructions != all {
		t.Fatalf("figures: samples %d simulated %d (%d insts) of %d (%d): want %d, %d (%d), %d (%d)",
			p.Samples, p.SimulatedLaunches, p.SimulatedInstructions, p.Launches, p.Instructions, samples, len(sim), insts, len(in.Launches), all)
	}
	if all > 0 && math.Abs(p.SimulatedFraction-float64(insts)/float64(all)) > 1e-12 {
		t.Fatalf("simulated fraction %g, want %g", p.SimulatedFraction, float64(insts)/float64(all))
	}
	if !(p.CILow <= p.Estimate && p.Estimate <= p.CIHigh) || p.ExpectedError < 0 {
		t.Fatalf("interval [%g, %g] around %g, expected error %g", p.CILow, p.CIHigh, p.Estimate, p.ExpectedError)
	}
}

// stratumOf is the index of the stratum holding launch i.
func stratumOf(p sampling.Plan, i int) int {
	for h, s := range p.Strata {
		if _, ok := slices.BinarySearch(s.Members, int32(i)); ok {
			return h
		}
	}
	return -1
}

func TestSTEM(t *testing.T) {
	bimodal := make([]float64, 200)
	for i := range bimodal {
		bimodal[i] = 1000 + float64(i%10) // 1000..1009
		if i%2 == 1 {
			bimodal[i] += 4000 // 5000..5009
		}
	}
	outliers := append(repeat(1000, 300), 50000, 52000)
	for i := range 300 {
		outliers[i] += float64(i%3) - 1 // 999, 1000, 1001
	}
	for _, tt := range []struct {
		name  string
		in    sampling.Input
		check func(t *testing.T, in sampling.Input, p sampling.Plan)
	}{
		{"one launch", input(launches("k", 8, 1500)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 1 || p.Samples != 1 || p.SimulatedFraction != 1 || p.ExpectedError != 0 || p.Total != 1500 || p.Estimate != 1500 {
				t.Fatalf("%+v", p)
			}
			r := p.Strata[0].Representatives[0]
			if r.Launch != 0 || r.Weight != 1 || len(r.Warmup) != 0 || *r.DurationNs != 1500 {
				t.Fatalf("representative %+v", r)
			}
		}},
		{"identical durations", input(launches("k", 8, repeat(2000, 100)...)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			// The simulator's own spread (SimSpread) still asks for a
			// few: n = ceil(1 / ((ε/(1.96·ρ))² + 1/N)).
			// At least 2: a run measures that spread (MinSpreadDF).
			r := 0.01 / (1.959963984540054 * sampling.SimSpread)
			want := max(int(math.Ceil(1/(r*r+1.0/100))), 2)
			if len(p.Strata) != 1 || p.Samples != want || p.ExpectedError > 0.01 || p.Total != 200000 || p.Estimate != 200000 {
				t.Fatalf("%d strata, %d samples, error %g, total %g, estimate %g", len(p.Strata), p.Samples, p.ExpectedError, p.Total, p.Estimate)
			}
			if s := p.Strata[0]; *s.CVDuration != 0 || *s.MeanDurationNs != 2000 || s.Representatives[0].Weight != 100/float64(want) {
				t.Fatalf("stratum %+v", s)
			}
		}},
		{"two modes", input(launches("k", 8, bimodal...)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) < 2 {
				t.Fatalf("%d strata: the modes 1000 and 5000 ns are not apart", len(p.Strata))
			}
			for h, s := range p.Strata {
				if *s.MeanDurationNs > 1100 && *s.MeanDurationNs < 4900 {
					t.Fatalf("stratum %d: mean %g, CV %g: mixes the modes", h, *s.MeanDurationNs, *s.CVDuration)
				}
			}
			if p.ExpectedError > 0.01 {
				t.Fatalf("expected error %g over the 1 %% target", p.ExpectedError)
			}
		}},
		{"outliers", input(launches("k", 8, outliers...)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			main, hi1, hi2 := stratumOf(p, 0), stratumOf(p, 300), stratumOf(p, 301)
			if main == hi1 || main == hi2 {
				t.Fatalf("an outlier shares the stratum of the 1000 ns launches")
			}
			if s := p.Strata[main]; s.Size != 300 || len(s.Representatives) > 3 {
				t.Fatalf("the 1000 ns launches: size %d, %d representatives; want 300, at most 3", s.Size, len(s.Representatives))
			}
			// The outliers' spread is mostly counted as timing noise
			// (TimingWeight): one stands for both, within the bound.
			if math.Abs(p.Estimate-p.Total) > 0.01*p.Total || p.ExpectedError > 0.01 {
				t.Fatalf("estimate %g, total %g, expected error %g", p.Estimate, p.Total, p.ExpectedError)
			}
		}},
		{"grids apart", input(launches("k", 8, repeat(1000, 10)...), launches("k", 16, repeat(1000, 10)...)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 2 || p.Strata[0].Grid.X != 8 || p.Strata[1].Grid.X != 16 || p.Strata[0].Block.X != 128 {
				t.Fatalf("strata %+v", p.Strata)
			}
		}},
		{"untimed launches", input(launches("k", 8, 1000, 0, 1000, 0, 0, 1000)), func(t *testing.T, in sampling.Input, p sampling.Plan) {
			if len(p.Strata) != 2 || p.UntimedLaunches != 3 || p.Total != 3000 || p.Basis != cascade.BasisDuration {
				t.Fatalf("%d strata, %d untimed, total %g, basis %s", len(p.Strata), p.UntimedLaunches, p.Total, p.Basis)
			}
			if s := p.Strata[stratumOf(p, 1)]; s.MeanDurationNs != nil || s.Size != 3 || len(s.Representatives) != 1 {
				t.Fatalf("the untimed stratum: %+v", s)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := sampling.STEM{}.Plan(tt.in, sampling.Target{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Method != cascade.SamplingSTEM || *p.TargetError != sampling.DefaultError || p.ErrorBound != sampling.DefaultError {
				t.Fatalf("method %s, target %v, bound %g", p.Method, p.TargetError, p.ErrorBound)
			}
			checkPlan(t, tt.in, p)
			tt.check(t, tt.in, p)
		})
	}
}

// TestSTEMAllocation: one stratum of equal durations samples what the
// simulator's own spread (SimSpread) needs for the bound on the total,
// n = ceil(1 / ((ε/(1.96·ρ))² + 1/N)), and no fewer (but 2: a run
// measures that spread); of two strata alike
// but for the cost of a launch, the one 4× dearer gets half the
// representatives (Neyman's allocation: n ∝ N·S/√c).
func TestSTEMAllocation(t *testing.T) {
	in := input(launches("k", 8, repeat(1000, 1000)...))
	for _, eps := range []float64{0.001, 0.002, 0.004} {
		p, err := sampling.STEM{Warmup: sampling.NoWarmup}.Plan(in, sampling.Target{Error: eps})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, in, p)
		r := eps / (1.959963984540054 * sampling.SimSpread)
		want := max(int(math.Ceil(1/(r*r+1.0/1000))), 2) // 2 at least: MinSpreadDF
		if len(p.Strata) != 1 || p.Samples != want {
			t.Fatalf("ε %g: %d strata, %d samples; want 1, %d", eps, len(p.Strata), p.Samples, want)
		}
		if p.ExpectedError > eps || p.ExpectedError < eps/2 {
			t.Fatalf("ε %g: expected error %g: over the bound, or far under it", eps, p.ExpectedError)
		}
	}

	ds := make([]float64, 2000)
	for i := range ds {
		ds[i] = 1000 + 20*float64(i%2) // two values 2 % apart: not worth a split each
	}
	cheap, dear := launches("a", 8, ds...), launches("b", 8, ds...)
	for i := range dear {
		dear[i].WarpInstructions = 4000
	}
	in = input(cheap, dear)
	p, err := sampling.STEM{Warmup: sampling.NoWarmup}.Plan(in, sampling.Target{Error: 0.0005})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, in, p)
	n := map[string]int{}
	for _, s := range p.Strata {
		n[s.Name] += len(s.Representatives)
	}
	if ratio := float64(n["a"]) / float64(n["b"]); ratio < 1.7 || ratio > 2.3 {
		t.Fatalf("representatives %v: the cheaper kernel should have about twice the dearer's", n)
	}
	if p.ExpectedError > 0.0005 {
		t.Fatalf("expected error %g over the bound", p.ExpectedError)
	}
}

func TestSTEMRefuses(t *testing.T) {
	timed := input(launches("k", 8, 1000, 2000))
	for _, tt := range []struct {
		name   string
		method sampling.STEM
		in     sampling.Input
		target sampling.Target
	}{
		{"no timing", sampling.STEM{}, input(launches("k", 8, 0, 0)), sampling.Target{}},
		{"no launches", sampling.STEM{}, sampling.Input{}, sampling.Target{}},
		{"error below 0", sampling.STEM{}, timed, sampling.Target{Error: -0.1}},
		{"error of 1", sampling.STEM{}, timed, sampling.Target{Error: 1}},
		{"error NaN", sampling.STEM{}, timed, sampling.Target{Error: math.NaN()}},
		{"budget below 0", sampling.STEM{}, timed, sampling.Target{Instructions: -5}},
		{"both", sampling.STEM{}, timed, sampling.Target{Error: 0.01, Instructions: 5000}},
		{"budget too small", sampling.STEM{}, timed, sampling.Target{Instructions: 999}},
		{"warm-up too long", sampling.STEM{Warmup: sampling.MaxWarmup + 1}, timed, sampling.Target{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.method.Plan(tt.in, tt.target)
			if cascade.ErrorCode(err) != cascade.EINVALID {
				t.Fatalf("err %v, want %s", err, cascade.EINVALID)
			}
			// The argument at fault, as the API names it, not the package.
			if msg := cascade.ErrorMessage(err); !regexp.MustCompile(`^(traceId|method|target|warmup): `).MatchString(msg) {
				t.Fatalf("err %q does not start with the argument at fault", msg)
			}
		})
	}
}

// TestBudget: under a budget of instructions a plan simulates at most
// that, and a larger budget buys a plan at least as precise.
func TestBudget(t *testing.T) {
	in := llmTrace(newRand(3), 20000, 12, true)
	for _, m := range []sampling.Method{sampling.STEM{}, sampling.Sieve{}} {
		all := int64(0)
		for _, l := range in.Launches {
			all += l.WarpInstructions
		}
		prev := math.Inf(1)
		for _, share := range []float64{0.01, 0.03, 0.1, 0.3} {
			budget := int64(share * float64(all))
			p, err := m.Plan(in, sampling.Target{Instructions: budget})
			if err != nil {
				t.Fatalf("%T, %g of the instructions: %v", m, share, err)
			}
			checkPlan(t, in, p)
			if p.SimulatedInstructions > budget || *p.TargetInstructions != budget || p.TargetError != nil {
				t.Fatalf("%T, budget %d: simulates %d, target %v", m, budget, p.SimulatedInstructions, p.TargetInstructions)
			}
			if p.ErrorBound > prev {
				t.Fatalf("%T, budget %d: bound %g, above %g of a smaller budget", m, budget, p.ErrorBound, prev)
			}
			prev = p.ErrorBound
		}
	}
}
