package cascade

// SampledRun is what a sampled run is beyond a run: the plan it simulates
// the representatives of, and what projecting every launch from them gave.
// A sampled run simulates nothing itself: each run of adjacent launches to
// simulate (warm-up, then representatives) is a segment, a run of its own
// whose SampledByID is the sampled run, and the segments run in parallel.
// Its KernelsDone and KernelsTotal count representatives.
type SampledRun struct {
	// RunID is the sampled run's id: not stored (the run's row holds it),
	// set by whoever hands the SampledRun on alone.
	RunID  string `json:"-"`
	PlanID string `json:"planId"`
	// ValidationRunID is the full run launched with validate; nil without.
	ValidationRunID *string `json:"validationRunId,omitempty"`
	// SegmentIDs are its segments' runs, in launch order.
	SegmentIDs []string `json:"segmentIds"`
	// SegmentRepresentatives and SegmentInstructions are, by segment,
	// the representatives it simulates and the warp instructions of all
	// its launches (warm-up too).
	SegmentRepresentatives []int   `json:"segmentRepresentatives"`
	SegmentInstructions    []int64 `json:"segmentInstructions"`

	// Instructions is the warp instructions of every launch of the trace.
	Instructions          int64   `json:"instructions"`
	Representatives       int     `json:"representatives"`
	SimulatedLaunches     int     `json:"simulatedLaunches"`
	SimulatedInstructions int64   `json:"simulatedInstructions"`
	SimulatedFraction     float64 `json:"simulatedFraction"`

	// ProjectedCycles is every launch's simulated cycles, projected, and
	// [CILowCycles, CIHighCycles] its 95 % confidence interval;
	// ExpectedError the interval's half-width relative to it. nil until
	// every segment has succeeded.
	ProjectedCycles *float64 `json:"projectedCycles,omitempty"`
	CILowCycles     *float64 `json:"ciLowCycles,omitempty"`
	CIHighCycles    *float64 `json:"ciHighCycles,omitempty"`
	ExpectedError   *float64 `json:"expectedError,omitempty"`
	// ProjectedNs is ProjectedCycles at the run's core clock.
	ProjectedNs *float64 `json:"projectedNs,omitempty"`

	// SimulatorSeconds is the wall seconds of the segments' simulators;
	// FullRunSecondsEstimate what a full run would take at their rate of
	// seconds per warp instruction, nil before a segment ran.
	SimulatorSeconds       float64  `json:"simulatorSeconds"`
	FullRunSecondsEstimate *float64 `json:"fullRunSecondsEstimate,omitempty"`
}

// SamplingCheck is a sampled run's projection against a full run's
// simulation of the same trace and config.
type SamplingCheck struct {
	FullRunID  string
	FullCycles float64
	// TotalErrorPct is 100 * (projected - full) / full of the total
	// cycles; BeyondLatencyErrorPct the same of the cycles beyond the
	// config's fixed launch latency (LaunchLatencyCycles a launch), nil
	// when that latency is not known.
	TotalErrorPct         float64
	BeyondLatencyErrorPct *float64
	LaunchLatencyCycles   *int
	// InsideInterval: FullCycles is inside the stated 95 % interval.
	InsideInterval bool
	// KernelMAPE and MaxKernelErrorPct are the mean and largest |error|
	// per launch against the full run's, over KernelsCompared launches.
	KernelMAPE        float64
	MaxKernelErrorPct float64
	KernelsCompared   int
	// MeasuredMAPE and FullMeasuredMAPE are the sampled and full runs'
	// MAPE against measured time; nil without real timing.
	MeasuredMAPE     *float64
	FullMeasuredMAPE *float64
}
