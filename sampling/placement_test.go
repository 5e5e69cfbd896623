package sampling_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade/sampling"
)

// TestPlacementBias evaluates the planner's own placement (seed 0: the
// plan a user gets) against every stored full run, the representatives
// taking their full-run cycles (sampling.Evaluate): what is left is the
// sampling part of a sampled run's error, the warm-up part set aside.
// A placement that prefers launches for a reason their cycles share (the
// cheapest, right after a prefill whose eviction slows them) errs the
// same way on every run; one that does not errs either way. The test
// fails when the mean error over the plans of the default bound and the
// three tighter ones, on every run, is beyond maxPlacementBias: +0.362 %
// (all 44 positive) before launches after a heavy step were kept apart
// (afterHeavy), +0.086 % (40 of 44 positive) with every one of them in
// strata of their own, +0.093 % (40 of 44) since a kernel's only one
// stays among its others, never picked, and heavy launches are not
// marked (heavyStrata: a fifth less simulated on the 300-launch runs),
// +0.107 % (44 of 48) with a twelfth run stored (requests on SM7_QV100),
// over the limit: the cold start, a prefill stratum's launch at the
// trace's first step, which costs no warm-up and runs slower. The
// placement now passes over each kernel's first launch (coldFirsts):
// −0.043 % (19 of 48), since the projection never sees a first launch's
// extra cycles (docs/sampling-benchmarks.md).
func TestPlacementBias(t *testing.T) {
	runs := readFullRuns(t)
	var sum, sumAbs float64
	var n, pos int
	for _, fr := range runs {
		for _, target := range append([]float64{sampling.DefaultError}, tightTargets...) {
			p, e := fr.planned(t, target)
			if target == sampling.DefaultError || testing.Verbose() {
				first, small, large := fr.errorParts(p)
				t.Logf("%-20s ε %-6g: error %+.3f %% (strata of the first step %+.3f, other strata under %d launches %+.3f, the rest %+.3f), stated ±%.3f %% (with the warmed allowance ±%.3f %%), representatives %+.2f %% off their strata's means, %d representatives, %.1f %% simulated",
					fr.name, target, 100*e.Error, 100*first, smallStratum, 100*small, 100*large, 100*e.SamplingHalfWidth, 100*e.HalfWidth, 100*fr.offMean(p), p.Samples, 100*p.SimulatedFraction)
			}
			sum += e.Error
			sumAbs += math.Abs(e.Error)
			n++
			if e.Error > 0 {
				pos++
			}
		}
	}
	mean := sum / float64(n)
	t.Logf("%d plans: mean error %+.3f %%, mean |error| %.3f %%, %d of them positive", n, 100*mean, 100*sumAbs/float64(n), pos)
	if math.Abs(mean) > maxPlacementBias {
		t.Errorf("the planner's placement errs %+.3f %% on average over %d plans, want within ±%g %%", 100*mean, n, 100*maxPlacementBias)
	}
}

// maxPlacementBias is how far from 0 the mean error of the planner's
// placements over the stored runs may be.
const maxPlacementBias = 0.001

// smallStratum is the size under which errorParts counts a stratum as
// small: the prefill's, the odd variants' and those after a heavy step
// on the stored 300-launch runs.
const smallStratum = 10

// errorParts splits the error of plan p against fr's full run (each
// stratum's ratio estimate of its cycles against their sum, relative to
// the full total) into that of the strata whose first launch is in the
// trace's first step (p.Warmup launches: the cold start), of the other
// strata under smallStratum launches, and of the rest.
func (fr fullRun) errorParts(p sampling.Plan) (first, small, large float64) {
	total := 0.0
	for _, c := range fr.cycles {
		total += c
	}
	for _, st := range p.Strata {
		var y, x, ry, rx float64
		for _, i := range st.Members {
			y += fr.cycles[i]
			x += float64(fr.in.Launches[i].WarpInstructions)
		}
		for _, r := range st.Representatives {
			ry += fr.cycles[r.Launch]
			rx += float64(fr.in.Launches[r.Launch].WarpInstructions)
		}
		d := (ry/rx*x - y) / total
		switch {
		case int(st.Members[0]) < p.Warmup:
			first += d
		case len(st.Members) < smallStratum:
			small += d
		default:
			large += d
		}
	}
	return first, small, large
}
