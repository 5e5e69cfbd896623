package sampling

// EvaluateWithPrior is Evaluate with the projection's pooled spread
// given spread² as weight degrees of freedom of prior instead of
// SimSpread and PriorWeight: the calibration test fits them on some
// stored full runs and evaluates on the others.
func EvaluateWithPrior(p Plan, in Input, full []float64, spread, weight float64) (Evaluation, error) {
	return evaluate(p, in, full, spreadPrior{spread, weight})
}
