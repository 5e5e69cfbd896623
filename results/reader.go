// Package results is the read side of runs: what a finished (or running)
// run gives back, read from the store and never written. A [Reader] joins
// a run's stored kernel results with its trace's measured timing and step
// timeline (results.go, stats.go), compares them with measured times
// (comparison.go) and projects the program's steps (steps.go), adds up
// its statistics, writes its kernels as CSV (csv.go), compares a trace's
// runs config by config and a sweep's trace by config (configcompare.go,
// sweepcompare.go), sets a sweep's cells side by side with their
// speedups against a baseline (designspace.go, designcsv.go), sets its
// statistics against the hardware counters the trace's profiles measured,
// run by run and config by config (correlate.go, correlation.go,
// configcorrelation.go), and checks
// a sampled run's projection against a full run of the same trace and
// config (samplingcheck.go).
//
// A [Correlator] sets runs' statistics against the hardware counters
// their traces' profiles measured, run by run and config by config
// (correlate.go, correlation.go, configcorrelation.go, correlationcsv.go).
//
// The run lifecycle (package runs) records what it reads; the only thing
// it asks of the lifecycle is the statistics totals it followed while a
// run ran here ([Live]). Everything it computes is kept for the versions
// of the rows it was computed from, so a changed run or trace is never
// answered from the cache.
package results

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/internal/versioned"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/tracedir"
)

// Store is what the read side reads of the database (*db.DB): runs,
// their stored kernel results, their traces and sweeps. It writes
// nothing.
type Store interface {
	// Trace returns the trace with the given id, or a NOT_FOUND error.
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	// Run returns the run with the given id, or a NOT_FOUND error.
	Run(ctx context.Context, id string) (cascade.Run, error)
	// TraceRuns returns a trace's runs, newest first.
	TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error)
	RunKernels(ctx context.Context, runID string) ([]cascade.RunKernel, error)
	RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
	SweepRuns(ctx context.Context, id string, states ...cascade.RunState) ([]cascade.Run, error)
	// Kernels is a page of a trace's kernels in list order (search "":
	// all of them).
	Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error)
	// KernelCounters returns what the trace's hardware profiles measured
	// of its kernels whose position is in [from, to).
	KernelCounters(ctx context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error)
}

// Configs lists the sim configs as they are now (*runs.Configs): a run
// that recorded no core clock is timed at its config's.
type Configs interface {
	SimConfigs() ([]cascade.SimConfig, error)
	// Gone says where a config that is not among them is gone from,
	// naming the setting the user gave ("no longer in ... (<dir>)").
	Gone() string
}

// Live gives the statistics totals the run lifecycle followed as a run
// ran here (*runs.Manager, see [runs.Manager.LiveTotals]).
type Live interface {
	LiveTotals(r cascade.Run) (runs.StatTotals, bool)
}

// Config configures a Reader.
type Config struct {
	Store   Store
	Configs Configs
	// Plans reads sampling plans, for the paired speedups of a sampled
	// design sweep's cells; nil states each cell's own interval only.
	Plans     Plans
	Live      Live   // nil: totals are always added up from the stored kernels
	BucketDir string // where trace directories (and their timing files) are
}

// Reader reads what finished and running runs give back. Its methods are
// safe for concurrent use; what it computes it keeps for the versions of
// the rows it read (a run's, its trace's, a sweep's runs'), so a page that
// asks for a run's kernels, comparison and steps separately computes them
// once, and a changed row is never answered from the cache.
type Reader struct {
	cfg Config

	results      *versioned.Cache[string, Results]                      // see Results
	sweepTallies *versioned.Cache[string, *sweepTally]                  // see SweepComparison
	aligned      *versioned.Cache[string, []cascade.ConfigKernelErrors] // see ConfigComparisonKernels
	comparisons  *versioned.Cache[string, *cascade.RunComparison]       // see SweepGrid
	totals       *versioned.Cache[string, runs.StatTotals]              // see StatTotals
	checks       *versioned.Cache[string, *cascade.SamplingCheck]       // see SamplingCheck
	designs      *versioned.Cache[string, *designTally]                 // see DesignSpace
	profileRows  *versioned.Cache[string, []tracedir.TimingRow]         // see profileTimes
	timings      *versioned.Cache[string, *traceTiming]                 // see timing
}

// New returns a Reader. Without Configs, a run that recorded no core
// clock has no simulated times.
func New(cfg Config) *Reader {
	if cfg.Configs == nil {
		cfg.Configs = noConfigs{}
	}
	return &Reader{cfg: cfg,
		results:      versioned.New[string, Results](maxCachedResults),
		sweepTallies: versioned.New[string, *sweepTally](maxCachedSweeps),
		aligned:      versioned.New[string, []cascade.ConfigKernelErrors](maxCachedAligned),
		comparisons:  versioned.New[string, *cascade.RunComparison](maxCachedComparisons),
		totals:       versioned.New[string, runs.StatTotals](maxCachedTotals),
		checks:       versioned.New[string, *cascade.SamplingCheck](maxCachedChecks),
		designs:      versioned.New[string, *designTally](maxCachedDesigns),
		profileRows:  versioned.New[string, []tracedir.TimingRow](maxCachedProfileTimes),
		timings:      versioned.New[string, *traceTiming](maxCachedTimings),
	}
}

// noConfigs lists none.
type noConfigs struct{}

func (noConfigs) SimConfigs() ([]cascade.SimConfig, error) { return nil, nil }
func (noConfigs) Gone() string                             { return "not among the configs: this server reads none" }
