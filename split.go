package cascade

// SplitRun is what a split run is beyond a run: a full simulation of every
// launch of its trace, cut into segments of consecutive launches that are
// simulated in parallel, each a run of its own (its SampledByID is the
// split run), and stitched into the split run's kernels. Each segment but
// the first simulates Warmup launches before its own first, whose results
// are discarded: they leave the simulated caches as the launches before
// it would have. Its KernelsDone and KernelsTotal count launches.
type SplitRun struct {
	// RunID is the split run's id: not stored (the run's row holds it),
	// set by whoever hands the SplitRun on alone.
	RunID string `json:"-"`
	// SegmentIDs are its segments' runs, in launch order.
	SegmentIDs []string `json:"segmentIds"`
	// SegmentStarts are, by segment, the first launch (position in the
	// trace's kernel list) whose results the segment gives: segment i
	// gives launches SegmentStarts[i] to SegmentStarts[i+1]-1 (the last,
	// to Launches-1).
	SegmentStarts []int `json:"segmentStarts"`
	// Launches counts the trace's launches.
	Launches int `json:"launches"`
	// Warmup is the launches simulated before each segment's own (but
	// the first's); Period is the trace's step in launches
	// (sampling.Period), the default warm-up.
	Warmup int `json:"warmup"`
	Period int `json:"period"`
	// Note says why the run has fewer segments than asked for, or that
	// they simulate much more than the trace (sampling.SplitNoted); ""
	// when split as asked.
	Note string `json:"note,omitempty"`
	// SimulatorSeconds is the wall seconds of the segments' simulators,
	// summed, once every segment has succeeded.
	SimulatorSeconds float64 `json:"simulatorSeconds"`
}

// SegmentEnd is the launch after the last one segment i gives.
func (s *SplitRun) SegmentEnd(i int) int {
	if i+1 < len(s.SegmentStarts) {
		return s.SegmentStarts[i+1]
	}
	return s.Launches
}
