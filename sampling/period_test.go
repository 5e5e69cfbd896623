package sampling_test

import (
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// steps makes launches of a model's steps: an embedding, layers of the
// kernels named, an lm_head, step after step.
func steps(n, layers int, names ...string) sampling.Input {
	var in sampling.Input
	add := func(name string) {
		in.Launches = append(in.Launches, sampling.Launch{
			KernelID: len(in.Launches) + 1, Name: name, Grid: cascade.Dim3{X: 4, Y: 1, Z: 1}, Block: cascade.Dim3{X: 128, Y: 1, Z: 1},
			WarpInstructions: 1000, DurationNs: 3000 + float64(len(in.Launches)%7),
		})
	}
	for len(in.Launches) < n {
		add("embed")
		for range layers {
			for _, nm := range names {
				add(nm)
			}
		}
		add("lm_head")
	}
	in.Launches = in.Launches[:n]
	return in
}

// TestPeriod: a step's length, from the kernel names alone.
func TestPeriod(t *testing.T) {
	cases := []struct {
		in   sampling.Input
		want int
	}{
		{steps(300, 4, "norm", "qkv", "attn", "out", "up", "down"), 26},
		{steps(2000, 32, "norm", "qkv", "attn"), 3},    // a layer: 32 of them make up 98 % of a step
		{steps(300, 1, "a"), 3},                        // embed a lm_head
		{steps(5, 1, "a", "b", "c", "d", "e", "f"), 1}, // too short to repeat: the default
	}
	for i, c := range cases {
		if got := sampling.Period(c.in); got != c.want {
			t.Errorf("case %d: period %d, want %d", i, got, c.want)
		}
	}
	// No period within MaxWarmup: the default warm-up.
	var in sampling.Input
	for i := range 500 {
		in.Launches = append(in.Launches, sampling.Launch{KernelID: i + 1, Name: fmt.Sprint("k", i), DurationNs: 1})
	}
	if got := sampling.Period(in); got != sampling.DefaultWarmup {
		t.Errorf("distinct names: period %d, want %d", got, sampling.DefaultWarmup)
	}
}

// TestWarmupStep: each representative is warmed up by the step before
// it, but by no more warp instructions than a step of launches of the
// mean size: in a first step of large launches (a prefill), by fewer
// launches. New takes WarmupStep.
func TestWarmupStep(t *testing.T) {
	in := steps(300, 4, "norm", "qkv", "attn", "out", "up", "down")
	for i := range 26 {
		in.Launches[i].WarpInstructions = 50_000 // the prefill
		in.Launches[i].DurationNs = 90_000 + float64(i%5)
	}
	total := int64(0)
	for _, l := range in.Launches {
		total += l.WarpInstructions
	}
	capInsts := 26 * (total / 300)
	m, err := sampling.New(cascade.SamplingSTEM, in, sampling.WarmupStep)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(in, sampling.Target{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Warmup != 26 {
		t.Fatalf("warm-up %d, want 26", p.Warmup)
	}
	short := 0
	for _, st := range p.Strata {
		for _, r := range st.Representatives {
			insts := int64(0)
			for _, w := range r.Warmup {
				insts += in.Launches[w.Launch].WarpInstructions
			}
			want := min(r.Launch, 26)
			if len(r.Warmup) > 0 && r.Warmup[len(r.Warmup)-1].Launch != r.Launch-1 || len(r.Warmup) > want ||
				len(r.Warmup) < want && (len(r.Warmup) == 0 || insts+in.Launches[r.Launch-len(r.Warmup)-1].WarpInstructions <= capInsts) ||
				len(r.Warmup) > 1 && insts > capInsts {
				t.Errorf("launch %d: warm-up of %d launches, %d instructions: want the %d before it, up to %d instructions", r.Launch, len(r.Warmup), insts, want, capInsts)
			}
			if len(r.Warmup) < want {
				short++
			}
		}
	}
	if short == 0 || short == p.Samples {
		t.Errorf("%d of %d representatives have less than a step of warm-up: want some, not all", short, p.Samples)
	}
	if _, err := sampling.New(cascade.SamplingSTEM, in, -3); err == nil {
		t.Error("warm-up -3 was taken")
	}
}
