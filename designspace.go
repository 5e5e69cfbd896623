package cascade

// DesignSpace is what a sweep's grid gives, cell by cell: each cell's
// (variant's) succeeded runs pooled over the sweep's traces, its
// simulated cycles and time, and its speedup against a baseline cell;
// the same per kernel name and per model step.
type DesignSpace struct {
	// Axes are the sweep's axes (none for a sweep of configs alone): a
	// cell's Values are in their order.
	Axes []SweepAxis
	// Baseline is the cell the speedups are against: the one asked for,
	// else the first whose every value is what its base config ships with
	// (Shipped), else the first cell.
	Baseline string
	Cells    []DesignCell
	// Kernels are the kernel names of the cells' runs, in the order first
	// met; Steps the model steps the runs of a trace with a step timeline
	// project. Each has its figures by cell, in Cells' order.
	Kernels []DesignKernel
	Steps   []DesignStep
}

// DesignCell is one cell of a sweep's grid: a variant and its runs.
type DesignCell struct {
	SimConfig string // the variant's canonical name
	Base      string // the tested config it is a variant of
	// Values are its value of each of the sweep's axes: an option's value,
	// or a modifier's name ("" for none).
	Values []string
	// Shipped: every value is the one its base config ships with.
	Shipped bool
	// Runs and Succeeded count its runs; Timed its succeeded runs with a
	// simulated time (a core clock recorded or known).
	Runs, Succeeded, Timed int
	// Cycles is its succeeded runs' simulated cycles added up (a sampled
	// run's projected cycles); TimeNs their time, each run's cycles at its
	// own core clock. Nil before a run succeeded; TimeNs nil too when a
	// succeeded run has no time.
	Cycles *float64
	TimeNs *float64
	// Speedup is the baseline's TimeNs / TimeNs; nil when either is nil.
	Speedup *float64
	// Sampled counts its succeeded sampled runs: their figures are
	// projected, and TimeLowNs and TimeHighNs (the sum of every run's
	// 95 % interval, a full run's being its time) bound TimeNs, nil when a
	// sampled run states none. SpeedupLow and SpeedupHigh are the speedup's
	// bounds from both cells' intervals.
	Sampled                 int
	TimeLowNs, TimeHighNs   *float64
	SpeedupLow, SpeedupHigh *float64
	// Paired: the bounds are those of the ratio of two sampled runs of one
	// plan, this cell's and the baseline's, whose shared representatives
	// make it tighter than the two intervals (sampling.ProjectSpeedup).
	Paired bool
	// Significant, when the speedup has bounds, reports whether they
	// exclude 1: only then does the speedup rank the two cells.
	Significant *bool
	// FullTimeNs is the time of the cell's validation runs (full runs of
	// its variant launched with a sampled sweep's validate), FullSpeedup
	// the baseline's FullTimeNs over it, and SpeedupErrorPct how far the
	// sampled Speedup is from FullSpeedup, in percent; nil without.
	FullTimeNs, FullSpeedup, SpeedupErrorPct *float64
	// EnergyJ is its runs' energy, from AccelWattch's report (a variant
	// with -power_simulation_enabled 1), AvgPowerW that energy over its
	// time, and InstsPerJoule its warp instructions per joule
	// (performance per watt); nil unless every succeeded run has power.
	EnergyJ, AvgPowerW, InstsPerJoule *float64
}

// DesignKernel is one kernel name's time in each cell (its launches'
// simulated times added up, over the cell's succeeded timed runs) and its
// speedup against the baseline cell's; nil where there is none.
type DesignKernel struct {
	Name    string
	TimeNs  []*float64
	Speedup []*float64
}

// DesignStep is one model step of a trace, projected by each cell's
// succeeded run of the trace (see StepProjection), and its speedup
// against the baseline cell's projection; nil where there is none.
type DesignStep struct {
	TraceID    string
	Step       int
	MeasuredNs float64
	TimeNs     []*float64
	Speedup    []*float64
}
