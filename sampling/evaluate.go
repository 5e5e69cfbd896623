package sampling

import (
	"fmt"
	"math"

	"github.com/cascade-sim/cascade"
)

// Evaluation is a plan evaluated against a full simulation (RunID is
// left to the caller).
type Evaluation = cascade.SamplingEvaluation

// Evaluate evaluates plan p, made from in, against full, a full run's
// cycles by launch position: the representatives take their full-run
// cycles and every launch is projected from them (Project). It simulates
// nothing, so any plan can be checked against a stored full run; what it
// cannot show is the error of warm-up (a representative simulated after
// a few launches rather than after all of them), which only a sampled
// run measures. Its HalfWidth adds the allowance of segments warmed as
// the server warms them (WarmupAllowance(p, L2Warmed)).
func Evaluate(p Plan, in Input, full []float64) (Evaluation, error) {
	return evaluate(p, in, full, defaultPrior)
}

func evaluate(p Plan, in Input, full []float64, prior spreadPrior) (Evaluation, error) {
	if len(full) != p.Launches {
		return Evaluation{}, fmt.Errorf("evaluate: the full run has %d launches, the plan %d", len(full), p.Launches)
	}
	sim := map[int]Simulated{}
	for h := range p.Strata {
		for _, r := range p.Strata[h].Representatives {
			if r.Launch < 0 || r.Launch >= len(full) {
				return Evaluation{}, fmt.Errorf("evaluate: representative %d is not a launch of the plan", r.Launch)
			}
			c := full[r.Launch]
			if math.IsNaN(c) || c < 0 {
				return Evaluation{}, fmt.Errorf("evaluate: launch %d has no cycles in the full run", r.Launch)
			}
			sim[r.Launch] = Simulated{Cycles: c}
		}
	}
	pr, err := project(p, in, sim, L2Warmed, prior)
	if err != nil {
		return Evaluation{}, err
	}
	e := Evaluation{Projected: pr.Total, Low: pr.Low, High: pr.High, HalfWidth: pr.Error, SamplingHalfWidth: pr.SamplingError}
	for _, c := range full {
		e.Full += c
	}
	if e.Full > 0 {
		e.Error = (e.Projected - e.Full) / e.Full
	}
	e.Inside = e.Full >= e.Low && e.Full <= e.High
	e.InsideSampling = math.Abs(e.Projected-e.Full) <= e.SamplingHalfWidth*math.Abs(e.Projected)
	return e, nil
}
