package sampling

import (
	"slices"
	"testing"
)

// TestAfterHeavy: a prefill step of heavy launches, then decode steps:
// the light launches whose step before holds more than a mean step's
// instructions are the first decode step's (the prefill's later
// launches are heavy themselves), and a new context starts with nothing
// before it.
func TestAfterHeavy(t *testing.T) {
	var in Input
	add := func(ctx string, insts ...int64) {
		for _, n := range insts {
			in.Launches = append(in.Launches, Launch{Name: "k", WarpInstructions: n, Context: ctx})
		}
	}
	add("a", 100, 100, 100) // prefill, launches 0–2
	for range 6 {           // decode steps, 3–20
		add("a", 10, 10, 10)
	}
	add("b", 10, 10, 10, 10, 10, 10) // another context, 21–26
	// 27 launches, 540 instructions: a mean launch of 20, a mean step
	// of 3 launches 60.
	got := afterHeavy(in, 3)
	var marked []int
	for i, m := range got {
		if m {
			marked = append(marked, i)
		}
	}
	// 1 and 2 have 100 and 200 before them, but take 100, five mean
	// launches; 3, 4, 5 have 300, 210, 120; 6 has 30.
	if want := []int{3, 4, 5}; !slices.Equal(marked, want) {
		t.Errorf("marked %v, want %v", marked, want)
	}
	if afterHeavy(in, 0) != nil || afterHeavy(Input{}, 3) != nil {
		t.Error("a step of 0 or no launches marks something")
	}
	flat := Input{Launches: in.Launches[3:21]}
	if got := afterHeavy(flat, 3); got != nil {
		t.Errorf("steps of equal work: marked %v", got)
	}
	// Steps alike whose mean launch is no whole number (31 instructions
	// a step of 3): the mean rounded down made every step heavy.
	var uneven Input
	for range 6 {
		for _, n := range []int64{10, 10, 11} {
			uneven.Launches = append(uneven.Launches, Launch{Name: "k", WarpInstructions: n, Context: "a"})
		}
	}
	if got := afterHeavy(uneven, 3); got != nil {
		t.Errorf("steps of equal work, a mean launch of 10⅓: marked %v", got)
	}
}

// TestHeavyStrata: a kernel's only after-heavy launch stays among its
// others, shunned; a kernel's several are grouped apart, as is one whose
// kernel has no other launch.
func TestHeavyStrata(t *testing.T) {
	var in Input
	add := func(name string, heavy ...bool) []bool {
		var marks []bool
		for _, h := range heavy {
			in.Launches = append(in.Launches, Launch{Name: name, WarpInstructions: 10})
			marks = append(marks, h)
		}
		return marks
	}
	var heavy []bool
	heavy = append(heavy, add("lone", true, false, false)...)   // 0–2
	heavy = append(heavy, add("several", true, false, true)...) // 3–5
	heavy = append(heavy, add("alone", true)...)                // 6
	heavy = append(heavy, add("unmarked", false, false)...)     // 7–8
	apart, shun := heavyStrata(in, heavy)
	var gotApart, gotShun []int
	for i := range heavy {
		if apart[i] {
			gotApart = append(gotApart, i)
		}
		if shun[i] {
			gotShun = append(gotShun, i)
		}
	}
	if !slices.Equal(gotApart, []int{3, 5, 6}) || !slices.Equal(gotShun, []int{0}) {
		t.Errorf("apart %v, shunned %v; want [3 5 6], [0]", gotApart, gotShun)
	}
	if a, s := heavyStrata(in, nil); a != nil || s != nil {
		t.Error("nothing marked: something apart or shunned")
	}
}

// TestShunnedNeverPicked: a request's first decode step, after its
// prefill, holds each decode kernel's only after-heavy launch; it is the
// cheapest place for every decode representative (its warm-up is the
// prefill, simulated anyway) and its durations are the kernels' medians,
// yet no plan, placed or at random, picks it unless it simulates its
// kernel's every launch.
func TestShunnedNeverPicked(t *testing.T) {
	var in Input
	timed(&in, "prefill1", 1000, 5000)
	timed(&in, "prefill2", 1000, 5000)
	for s := range 12 { // decode steps, 2–25: the first one's durations in the middle
		timed(&in, "a", 10, 100+float64((s*7)%12))
		timed(&in, "b", 10, 200+float64((s*5)%12))
	}
	heavy := afterHeavy(in, 2)
	if heavy == nil || !heavy[2] || !heavy[3] {
		t.Fatalf("the first decode step is not after a heavy one: %v", heavy)
	}
	for seed := range uint64(20) {
		for _, target := range []float64{0.01, 0.001, 0.0001} {
			p, err := STEM{Warmup: WarmupStep, Seed: seed}.Plan(in, Target{Error: target})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range p.Strata {
				if len(st.Representatives) == st.Size {
					continue // every launch simulated: a bin of one each
				}
				for _, r := range st.Representatives {
					if r.Launch == 2 || r.Launch == 3 {
						t.Fatalf("seed %d, ε %g: stratum %s picks launch %d, its kernel's only one after the prefill", seed, target, st.Name, r.Launch)
					}
				}
			}
		}
	}
}

// TestColdFirstNotPlaced: a kernel's first launch in the trace (cold:
// coldFirsts) is the cheapest representative there is when it opens the
// trace, for nothing before it needs simulating; the least-cost placement
// passes it over all the same, while a pick at random may take it.
func TestColdFirstNotPlaced(t *testing.T) {
	var in Input
	timed(&in, "setup", 50, 300) // launched once: nothing to pass over
	for range 3 {                // three layers of two kernels, alike
		timed(&in, "gemm", 1000, 5000)
		timed(&in, "norm", 100, 600)
	}
	for s := range 12 {
		timed(&in, "a", 10, 100+float64(s%3))
	}
	cold := coldFirsts(in, nil)
	for i := range in.Launches {
		if want := i == 1 || i == 2 || i == 7; cold[i] != want {
			t.Errorf("launch %d (%s): cold %v, want %v", i, in.Launches[i].Name, cold[i], want)
		}
	}
	for _, target := range []float64{0.01, 0.001} {
		p, err := STEM{Warmup: WarmupStep}.Plan(in, Target{Error: target})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range p.Strata {
			if len(st.Representatives) == st.Size {
				continue
			}
			for _, r := range st.Representatives {
				if cold[r.Launch] {
					t.Errorf("ε %g: stratum %s placed its representative on launch %d, its kernel's first", target, st.Name, r.Launch)
				}
			}
		}
	}
	picked := false
	for seed := uint64(1); seed <= 40 && !picked; seed++ {
		p, err := STEM{Warmup: WarmupStep, Seed: seed}.Plan(in, Target{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range p.Strata {
			for _, r := range st.Representatives {
				picked = picked || cold[r.Launch] && len(st.Representatives) < st.Size
			}
		}
	}
	if !picked {
		t.Error("no pick at random took a kernel's first launch in 40 seeds: random picks pass them over too, and are biased")
	}
}

// TestColdFirstOfTwoPlaced: a kernel launched twice projects the other
// launch off by as much whichever it simulates (minColdBin), so the
// placement takes the cheaper: the first, at the trace's start.
func TestColdFirstOfTwoPlaced(t *testing.T) {
	var in Input
	timed(&in, "x", 2000, 8000)
	for s := range 20 {
		timed(&in, "a", 10, 100+float64(s%3))
		timed(&in, "b", 10, 200+float64(s%3))
	}
	timed(&in, "x", 2000, 8000)
	p, err := STEM{Warmup: WarmupStep}.Plan(in, Target{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Strata {
		if st.Name == "x" && (len(st.Representatives) != 1 || st.Representatives[0].Launch != 0) {
			t.Errorf("stratum x (launches 0 and %d) has representatives %+v, want launch 0 alone", len(in.Launches)-1, st.Representatives)
		}
	}
}

// timed appends a launch of name, with insts warp instructions and a
// measured duration of ns, to in.
func timed(in *Input, name string, insts int64, ns float64) {
	in.Launches = append(in.Launches, Launch{KernelID: len(in.Launches) + 1, Name: name, WarpInstructions: insts, DurationNs: ns})
}
