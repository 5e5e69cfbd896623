package cascade

// RunComparison sets a run's simulated kernel times against the trace's
// measured ones (its real timing); each compared kernel's own figures are
// in its RunKernel.
type RunComparison struct {
	KernelsCompared int
	MAPE            float64  // mean of |ErrorPct|
	Correlation     *float64 // Pearson, simulated vs measured ns; nil with < 2 kernels or no variance
	SimTotalNs      float64  // sum over the compared kernels only
	MeasuredTotalNs float64  // sum over the compared kernels only
}

// StepProjection is a measured model step (from the trace's step
// timeline) and its time with the mapped kernels' measured durations
// replaced by a run's simulated times.
type StepProjection struct {
	Step           int
	MeasuredNs     float64
	ProjectedNs    float64
	EventsReplaced int // mapped events that had a simulated kernel
}
