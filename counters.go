package cascade

// KernelCounter is one statistic of one traced kernel as the trace's
// hardware profiles measured it (metadata.json profiles, formats.md §9):
// the mean of Count measurements (profiles, or passes of a profile over
// the program's launches), with their spread, as Accel-Sim's correlator
// draws its error bars. Stat is a simulator statistic's name (package
// accelsim/simstats), paired with a counter by accelsim/hwprofile's table.
type KernelCounter struct {
	TraceID string
	Seq     int // the kernel's position in the trace's list
	Stat    string
	Mean    float64
	Min     float64
	Max     float64
	Count   int
}

// ProfileRead is one hardware profile a trace's metadata.json named, as it
// was last read: when the trace became ready, or when the profile (or
// metadata.json's profiles) changed in the ready trace.
type ProfileRead struct {
	File     string `json:"file"`
	Profiler string `json:"profiler,omitempty"` // "ncu" or "nvprof"
	GPU      string `json:"gpu,omitempty"`      // as the profile names it
	CC       string `json:"cc,omitempty"`       // its compute capability, "7.0", when the profile says it
	// Launches is how many profiled launches it holds, Matched how many
	// were matched to traced kernels, Unmatched the others.
	Launches  int `json:"launches"`
	Matched   int `json:"matched"`
	Unmatched int `json:"unmatched"`
	// Stats are the simulator statistics it gave a counter for.
	Stats []string `json:"stats"`
	// Durations is the column it gave launch durations from
	// (gpu__time_duration.sum, nvprof's Duration), kept as the counter
	// hwprofile.DurationStat; "" when it has none.
	Durations string `json:"durations,omitempty"`
	// Sum fingerprints the file as it was read (tracedir.Tree.FileSig):
	// the scanner reads a ready trace's profiles again when a file's
	// differs.
	Sum string `json:"sum,omitempty"`
	// Error says why it was not read (a malformed file names its line and
	// column); nothing of it was then stored.
	Error string `json:"error,omitempty"`
}

// CounterPair is one kernel's value of a statistic as a run simulated it
// and as the trace's hardware profiles measured it ([KernelCounter]):
// one point of the correlator's scatter.
type CounterPair struct {
	Seq      int // the kernel's position in the trace's list
	RunSeq   int // the run's kernel's (RunKernel.Seq): its cursor among the run's pairs
	KernelID int
	Context  *string
	Name     string
	// Simulated is the run's value (RunKernel.Stats); on a sampled run,
	// a projected launch's is projected from its stratum's.
	Simulated float64
	// Measured is the mean of Measurements, within [MeasuredMin, MeasuredMax].
	Measured, MeasuredMin, MeasuredMax float64
	Measurements                       int
	// ErrorPct is 100 (Simulated - Measured) / Measured: 0 when both are
	// 0, nil when only Measured is.
	ErrorPct *float64
	// Representative is, on a sampled run, whether the launch was
	// simulated (true) or projected (false); nil on any other run.
	Representative *bool
}

// StatCorrelation sets a run's simulated statistic against the measured
// counter over every kernel that has both ([CounterPair]), with the
// figures Accel-Sim's correlator (util/plotting/plot-correlation.py)
// reports: its Correl, Err (MAPE), Agg_Err, NRMSE, "< 1 % Err",
// "< 10 % Err", over and under, per kernel rather than per application.
type StatCorrelation struct {
	Stat string
	Unit string // the simulator's
	// Kernels is how many kernels have both values.
	Kernels int
	// Pearson is the correlation coefficient of the pairs, computed
	// without overflow however large the values; nil with fewer than two,
	// either side constant, or a value not finite.
	Pearson *float64
	// MAE is the mean of |Simulated - Measured|, in Unit.
	MAE float64
	// MAPE is the mean of |ErrorPct| over the kernels that have one;
	// nil when none has.
	MAPE *float64
	// AggregateErrorPct is the correlator's Agg_Err, the sum of
	// |Simulated - Measured| over the sum of Measured, in percent;
	// TotalErrorPct is the signed error of the sums, 100 (sum Simulated -
	// sum Measured) / sum Measured. Both nil when sum Measured is 0.
	AggregateErrorPct *float64
	TotalErrorPct     *float64
	// NRMSE is the root of the mean squared difference over the mean of
	// Measured; nil when that mean is 0.
	NRMSE *float64
	// Within1Pct and Within10Pct count the kernels with |ErrorPct| under
	// 1 and 10; Over and Under those simulated above and below measured.
	Within1Pct, Within10Pct int
	Over, Under             int
	SimTotal, MeasuredTotal float64
	// FurthestOff are the kernels of largest |ErrorPct| (an undefined one
	// first), at most MaxFurthestOff, furthest first.
	FurthestOff []CounterPair
}

// MaxFurthestOff is how many kernels StatCorrelation.FurthestOff names.
const MaxFurthestOff = 5

// RunCorrelation is every statistic of a run that the trace's profiles
// measured, in the order of the run's statistics.
type RunCorrelation struct {
	Stats []StatCorrelation
	// GPUWarnings say where a profile's GPU is not the one the run's
	// config models or the trace was taken on: figures compared across
	// GPUs mislead (DRAM reads off by 4x). Empty when none is known to
	// differ.
	GPUWarnings []string
}

// ConfigCorrelation correlates each config's run of a trace (that of
// Trace.configComparison: its latest succeeded run) per statistic, and
// says which config matches the profiled GPU best, per statistic and
// overall.
type ConfigCorrelation struct {
	SimConfigs []string
	Runs       []*Run // aligned with SimConfigs; nil where none succeeded
	Stats      []ConfigStatCorrelation
	// Best is the config of the least mean rank over the statistics
	// ranked (see ConfigStatCorrelation.Best), configs of equal figures
	// sharing their ranks' mean; nil with fewer than two configs ranked,
	// or when the least mean rank is shared.
	Best *string
	// GPUWarnings are each config's RunCorrelation.GPUWarnings, aligned.
	GPUWarnings [][]string
}

// ConfigStatCorrelation is one statistic under each config.
type ConfigStatCorrelation struct {
	Stat string
	Unit string
	// Configs are aligned with ConfigCorrelation.SimConfigs; nil where
	// the config's run has no pair of the statistic.
	Configs []*StatCorrelation
	// Figure names the figure configs are ranked by: "MAPE" for cycles,
	// instructions and IPC (as the correlator's legends give them), else
	// "NRMSE".
	Figure string
	// Best is the config whose Figure is least; nil unless two or more
	// configs have one, or when another config's is as small.
	Best *string
}
