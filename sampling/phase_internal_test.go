package sampling

import (
	"slices"
	"testing"
)

// TestAfterHeavy: a prefill step of heavy launches, then decode steps:
// the launches whose step before holds more than a mean step's
// instructions are the first decode step's, and a new context starts
// with nothing before it.
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
	// 1 and 2 have 100 and 200 before them; 3, 4, 5 have 300, 210, 120;
	// 6 has 30.
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(marked, want) {
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
