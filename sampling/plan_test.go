package sampling_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// TestDeterministic: the same input and parameters give the same plan,
// whatever was planned before; another input gives another plan.
func TestDeterministic(t *testing.T) {
	// 10,000 launches: 19 steps of 32 layers of 16 kernels, the batch
	// changing at steps 1, 9 and 17.
	in := llmTrace(newRand(5), 10000, 16, true)
	again := llmTrace(newRand(5), 10000, 16, true)
	other := llmTrace(newRand(6), 10000, 16, true)
	for _, m := range []sampling.Method{sampling.STEM{}, sampling.Sieve{}, sampling.STEM{Warmup: 3}, sampling.Sieve{Warmup: sampling.NoWarmup}} {
		for _, target := range []sampling.Target{{}, {Error: 0.05}, {Instructions: 1 << 36}} {
			a, err := m.Plan(in, target)
			if err != nil {
				t.Fatal(err)
			}
			// Another input planned in between leaves nothing behind.
			c, err := m.Plan(other, target)
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.Plan(again, target)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%+v, %+v: two plans of one input differ", m, target)
			}
			if reflect.DeepEqual(a, c) {
				t.Fatalf("%+v, %+v: plans of two inputs are the same", m, target)
			}
		}
	}
}

// TestWarmupShared: among equally good launches a representative is one
// whose warm-up is already simulated, and the simulated launches count
// each once.
func TestWarmupShared(t *testing.T) {
	// a b a b a b a b: every a alike, every b alike. The a chosen is the
	// first launch (nothing before it to warm up); the b then is the one
	// right after it, which that a warms up.
	var parts [][]sampling.Launch
	for range 4 {
		parts = append(parts, counted("a", 8, 5000), counted("b", 8, 300))
	}
	in := input(parts...)
	p, err := sampling.Sieve{}.Plan(in, sampling.Target{})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, in, p)
	a, b := p.Strata[0].Representatives[0], p.Strata[1].Representatives[0]
	if a.Launch != 0 || len(a.Warmup) != 0 || b.Launch != 1 || !reflect.DeepEqual(b.Warmup, []cascade.SamplingLaunch{{Launch: 0, KernelID: 1}}) {
		t.Fatalf("representatives %+v and %+v: want launch 0, and 1 warmed up by 0", a, b)
	}
	if p.SimulatedLaunches != 2 || p.SimulatedInstructions != 5300 {
		t.Fatalf("simulates %d launches (%d instructions), want 2 (5300)", p.SimulatedLaunches, p.SimulatedInstructions)
	}

	// b a y b a b, the b of 100, 300 and 500 instructions. y, one launch,
	// has no choice and is chosen first: it is simulated after the a at
	// 1, which then represents a for nothing more than its own warm-up
	// (the b of 100 at 0), not the a at 4 after the b at 3. b's
	// representative is its launch closest to its mean, 3, warmed up by y.
	// (Under a bound of y's 45 % share or more, y would go without its
	// warm-up: TestCensusWarmup.)
	in = input(counted("b", 8, 100), counted("a", 8, 5000), counted("y", 8, 9000),
		counted("b", 8, 300), counted("a", 8, 5000), counted("b", 8, 500))
	p, err = sampling.Sieve{MaxCV: 10}.Plan(in, sampling.Target{Error: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, in, p)
	if b := p.Strata[0].Representatives[0]; b.Launch != 3 {
		t.Fatalf("b's representative %+v, want launch 3", b)
	}
	if a := p.Strata[1].Representatives[0]; p.Strata[1].Name != "a" || a.Launch != 1 {
		t.Fatalf("a's representative %+v, want launch 1 (the warm-up of y, a census)", a)
	}
	if p.SimulatedLaunches != 4 || p.SimulatedInstructions != 14400 {
		t.Fatalf("simulates %d launches (%d instructions), want 4 (14400: launches 0 to 3)", p.SimulatedLaunches, p.SimulatedInstructions)
	}
}

// TestCensusWarmup: a stratum of one launch holding at most the error
// bound's share of the warp instructions is simulated without its
// warm-up; a larger one, or the same under a tighter bound, with it.
func TestCensusWarmup(t *testing.T) {
	// a a a a y a a a a z: y is 0.6 % of the instructions, z 5.8 %.
	var parts [][]sampling.Launch
	for range 4 {
		parts = append(parts, counted("a", 8, 2000))
	}
	parts = append(parts, counted("y", 8, 100))
	for range 4 {
		parts = append(parts, counted("a", 8, 2000))
	}
	parts = append(parts, counted("z", 8, 1000))
	in := input(parts...)
	for _, c := range []struct {
		eps          float64
		yWarm, zWarm int
	}{{0.02, 0, 1}, {0.005, 1, 1}, {0.5, 0, 0}} {
		p, err := sampling.Sieve{Warmup: 1}.Plan(in, sampling.Target{Error: c.eps})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, in, p)
		warm := map[string]int{}
		for _, st := range p.Strata {
			if st.Size == 1 {
				warm[st.Name] = len(st.Representatives[0].Warmup)
			}
		}
		if warm["y"] != c.yWarm || warm["z"] != c.zWarm {
			t.Errorf("bound %g: y warmed up by %d launches, z by %d; want %d and %d", c.eps, warm["y"], warm["z"], c.yWarm, c.zWarm)
		}
	}
}

// TestWarmupCount: a representative is warmed up by the Warmup launches
// just before it in its context, none with NoWarmup, and the simulated
// fraction counts them.
func TestWarmupCount(t *testing.T) {
	ctx := func(c string, ls []sampling.Launch) []sampling.Launch {
		for i := range ls {
			ls[i].Context = c
		}
		return ls
	}
	in := input(
		ctx("0x1", counted("x", 8, 10, 20, 30)), ctx("0x1", counted("k", 8, 1000)),
		ctx("0x2", counted("k", 16, 1000)), ctx("0x2", counted("y", 8, 40)))
	for _, tt := range []struct {
		warmup int
		want   map[int][]int // representative: its warm-up
	}{
		{sampling.NoWarmup, map[int][]int{3: {}, 4: {}}},
		{0, map[int][]int{3: {2}, 4: {}}},
		{2, map[int][]int{3: {1, 2}, 4: {}}},
		{9, map[int][]int{3: {0, 1, 2}, 4: {}}},
	} {
		p, err := sampling.Sieve{Warmup: tt.warmup, MaxCV: 10}.Plan(in, sampling.Target{Error: 0.99})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, in, p)
		var k sampling.Plan
		k.Strata = slices.DeleteFunc(slices.Clone(p.Strata), func(s cascade.SamplingStratum) bool { return s.Name != "k" })
		if len(k.Strata) != 1 || len(k.Strata[0].Representatives) != 1 {
			t.Fatalf("warm-up %d: strata of k %+v", tt.warmup, k.Strata)
		}
		r := k.Strata[0].Representatives[0]
		var got []int
		for _, w := range r.Warmup {
			got = append(got, w.Launch)
		}
		if want, ok := tt.want[r.Launch]; !ok || !slices.Equal(got, want) {
			t.Fatalf("warm-up %d: representative %d warmed up by %v, want %v", tt.warmup, r.Launch, got, tt.want)
		}
	}
}

// TestNew: the method by name, the default by timing, and unknown names.
func TestNew(t *testing.T) {
	timed, untimed := input(launches("k", 8, 1000)), input(launches("k", 8, 0))
	for _, tt := range []struct {
		name cascade.SamplingMethod
		in   sampling.Input
		want cascade.SamplingMethod
	}{
		{"", timed, cascade.SamplingSTEM},
		{"", untimed, cascade.SamplingSieve},
		{cascade.SamplingSieve, timed, cascade.SamplingSieve},
		{cascade.SamplingSTEM, timed, cascade.SamplingSTEM},
	} {
		m, err := sampling.New(tt.name, tt.in, 2)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(tt.in, sampling.Target{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Method != tt.want || p.Warmup != 2 {
			t.Fatalf("New(%q): plans %s with warm-up %d, want %s with 2", tt.name, p.Method, p.Warmup, tt.want)
		}
	}
	for _, bad := range []struct {
		name   cascade.SamplingMethod
		warmup int
	}{{"PKS", 1}, {"stem", 1}, {cascade.SamplingSTEM, -1}, {cascade.SamplingSTEM, sampling.MaxWarmup + 1}} {
		if _, err := sampling.New(bad.name, timed, bad.warmup); cascade.ErrorCode(err) != cascade.EINVALID {
			t.Fatalf("New(%q, %d): %v, want %s", bad.name, bad.warmup, err, cascade.EINVALID)
		}
	}
	if p, _ := (sampling.STEM{Warmup: sampling.NoWarmup}).Plan(timed, sampling.Target{}); p.Warmup != 0 {
		t.Fatalf("NoWarmup: plan warm-up %d", p.Warmup)
	}
}
