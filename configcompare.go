package cascade

// ConfigComparison is how the runs of one trace under one config did: the
// figures of its latest succeeded run, and how many runs there are in
// each state, so that a figure always says how many runs it stands for.
type ConfigComparison struct {
	SimConfig string
	// Run is the run whose figures these are: the latest succeeded run
	// (by launch order) that is not sampled, the latest succeeded sampled
	// run only when the config has no other; nil when none has succeeded.
	Run *Run
	// Comparison is Run's comparison with the trace's measured times; nil
	// without Run or without usable real timing.
	Comparison *RunComparison
	// Runs counts every run of the trace under the config; the others
	// count those in one state.
	Runs, Succeeded, Failed, Cancelled, Running, Queued int
}

// Sampled reports whether Run is a sampled run: its kernels' cycles are
// projected from its representatives.
func (c ConfigComparison) Sampled() bool { return c.Run != nil && c.Run.Sampling != nil }

// ConfigKernelErrors is one traced kernel's error under each config of a
// trace's comparison: Errors[i] is the ErrorPct of the kernel in the run
// of the comparison's i-th config, nil when that config has no succeeded
// run, did not simulate the kernel, or could not compare it.
type ConfigKernelErrors struct {
	Seq      int // 0-based position in the aligned list: its cursor
	KernelID int
	Context  *string
	Name     string
	Errors   []*float64
	// Cycles is the kernel's simulated cycles in each config's run, in
	// the same order; nil where the config's run did not simulate it.
	Cycles []*int64
}

// SweepCell is one trace under one config of a sweep: its run there (a
// sweep launches one), and that run's comparison when it succeeded.
// Succeeded of Runs says how many runs the figures stand for: a cell whose
// run failed or is gone is "0 of 1", with no figures.
type SweepCell struct {
	TraceID, SimConfig string
	Run                *Run // nil when the run is gone
	Runs, Succeeded    int
	Comparison         *RunComparison // nil unless the run succeeded and was compared
}
