package resolvers

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/sampling/sampled"
)

// The interfaces below are what the resolvers ask of the packages that own
// the data, each named for what it serves; app wires in *db.DB,
// *runs.Manager, *runs.Sweeps, *runs.Configs, runs.Logs,
// runs.ExecutorHandle, *results.Reader, *sampled.Coordinator,
// *scanner.Scanner, *postproc.Processor, disk.Meter and *plans.Service,
// and a test may wire in fakes.

// TraceStore reads traces and their kernels.
type TraceStore interface {
	// Trace returns the trace with the given id, or a NOT_FOUND error.
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Traces(ctx context.Context, f cascade.TraceFilter, p cascade.Page) (cascade.PageOf[cascade.Trace], error)
	// TracesByID returns the traces of ids there are, in any order, a
	// page's in one query.
	TracesByID(ctx context.Context, ids []string) ([]cascade.Trace, error)
	Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error)
	// KernelCounters returns the counters of the trace's kernels whose
	// seq is in [from, to), by seq, then statistic name.
	KernelCounters(ctx context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error)
}

// RunStore reads runs and sweeps as they are stored.
type RunStore interface {
	// Run returns the run with the given id, or a NOT_FOUND error.
	Run(ctx context.Context, id string) (cascade.Run, error)
	Runs(ctx context.Context, f cascade.RunFilter, p cascade.Page) (cascade.PageOf[cascade.Run], error)
	// Segments returns a sampled run's segments, in launch order.
	Segments(ctx context.Context, id string) ([]cascade.Run, error)
	// Sweep returns the sweep with the given id, or NOT_FOUND.
	Sweep(ctx context.Context, id string) (cascade.Sweep, error)
	// Sweeps returns a page of sweeps, newest first.
	Sweeps(ctx context.Context, p cascade.Page) (cascade.PageOf[cascade.Sweep], error)
	// SweepProgress counts a sweep's runs by state.
	SweepProgress(ctx context.Context, id string) (cascade.SweepProgress, error)
}

// Store is what the API reads of the database.
type Store interface {
	TraceStore
	RunStore
}

// Launcher launches and cancels runs and sweeps (*runs.Manager).
type Launcher interface {
	Launch(ctx context.Context, in runs.LaunchInput) (cascade.Run, error)
	Cancel(ctx context.Context, id string) (cascade.Run, error)
}

// SweepLauncher launches and cancels sweeps (*runs.Sweeps).
type SweepLauncher interface {
	LaunchSweep(ctx context.Context, in runs.SweepInput) (cascade.Sweep, error)
	CancelSweep(ctx context.Context, id string) (cascade.Sweep, error)
}

// SampledLauncher launches sampled and split runs (*sampled.Coordinator).
type SampledLauncher interface {
	Launch(ctx context.Context, in sampled.Input) (cascade.Run, error)
	LaunchSplit(ctx context.Context, in sampled.SplitInput) (cascade.Run, error)
	LaunchSweep(ctx context.Context, in sampled.SweepInput) (cascade.Sweep, error)
}

// RunResults reads what a run gave back (*results.Reader).
type RunResults interface {
	// Read is the run's kernels joined with its trace's measured timing,
	// its comparison and its step projections.
	Read(ctx context.Context, r cascade.Run) (results.Results, error)
	// KernelPage is a page of the run's kernels, joined with timing as
	// Read's are.
	KernelPage(ctx context.Context, r cascade.Run, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error)
	// StatTotals is the run's value of each of its statistics.
	StatTotals(ctx context.Context, r cascade.Run) (runs.StatTotals, error)
	// SamplingCheck is a SUCCEEDED sampled run checked against a full
	// run; nil when there is none.
	SamplingCheck(ctx context.Context, r cascade.Run) (*cascade.SamplingCheck, error)
	// CurrentTraceSum is the traceSum a run of the trace launched now
	// would record; an error when its processed files cannot be read.
	CurrentTraceSum(traceID string) (string, error)
	// MeasuredTimesFrom says where the trace's measured kernel times
	// come from; nil when it has none.
	MeasuredTimesFrom(t cascade.Trace) *string
}

// Comparisons compares a trace's runs config by config, and a sweep's
// runs trace by config (*results.Reader).
type Comparisons interface {
	ConfigComparison(ctx context.Context, traceID string) ([]cascade.ConfigComparison, error)
	// ConfigComparisonKernels is a page of the trace's kernels with their
	// errors aligned with the configs it returns.
	ConfigComparisonKernels(ctx context.Context, traceID string, p cascade.Page) ([]cascade.ConfigComparison, cascade.PageOf[cascade.ConfigKernelErrors], error)
	SweepGrid(ctx context.Context, id string) ([]cascade.SweepCell, error)
	SweepComparison(ctx context.Context, id string) ([]cascade.SweepConfigComparison, error)
	// DesignSpace is the sweep's grid cell by cell, speedups against
	// baseline ("" for the default).
	DesignSpace(ctx context.Context, id, baseline string) (*cascade.DesignSpace, error)
}

// Correlations set runs' statistics against their traces' hardware
// counters (*results.Reader).
type Correlations interface {
	Correlation(ctx context.Context, r cascade.Run) (cascade.RunCorrelation, error)
	// CounterPairs is a page of the run's pairs of one statistic.
	CounterPairs(ctx context.Context, r cascade.Run, stat string, p cascade.Page) (cascade.PageOf[cascade.CounterPair], error)
	ConfigCorrelation(ctx context.Context, traceID string) (cascade.ConfigCorrelation, error)
}

// SimConfigs lists the sim configs, those a trace can run on, and the
// one a run used (*runs.Configs).
type SimConfigs interface {
	SimConfigs() ([]cascade.SimConfig, error)
	CompatibleSimConfigs(t cascade.Trace) ([]cascade.SimConfig, error)
	DefaultSimConfig(t cascade.Trace) (cascade.SimConfig, bool, error)
	// SimConfigsChecked reports whether the simulator has been asked
	// which configs it accepts.
	SimConfigsChecked() bool
	// NotSimulatable says why the simulator cannot simulate t; "" when
	// it can or that is not known.
	NotSimulatable(t cascade.Trace) string
	RunSimConfig(r cascade.Run) (cascade.SimConfig, error)
	CrossArchitecture(ctx context.Context, r cascade.Run) (bool, error)
	// SimConfigWarnings says what is wrong with t's suggested config
	// against the tested ones; none when nothing is.
	SimConfigWarnings(t cascade.Trace) []string
	// Modifiers is what define-standard-cfgs.yml defines.
	Modifiers() (simconfig.Modifiers, error)
	// Variant resolves a config's name and overrides and has the
	// simulator check them, as a launch does.
	Variant(ctx context.Context, name string, params []cascade.SimParam) (cascade.SimConfig, error)
}

// ExecutorHealth reports the health of where runs execute
// (runs.ExecutorHandle).
type ExecutorHealth interface {
	Status() cascade.ExecutorStatus
}

// TraceService is what the API asks of the scanner.
type TraceService interface {
	Retry(ctx context.Context, id string) (cascade.Trace, error)
	// Remove deletes a trace's directory from the bucket (traceRemoved
	// follows when the scanner has seen it).
	Remove(ctx context.Context, id string) error
}

// LogSource reads the log a trace's post-processor (*postproc.Processor)
// or a run's simulator (runs.Logs) writes.
type LogSource interface {
	LogLines(id string, n int) ([]string, error)
	TailLog(id string) cascade.LogTail
}

// DiskMeter measures the data directory against its budget.
type DiskMeter interface {
	Measure(ctx context.Context) (cascade.DiskUsage, error)
}

// Planner makes and reads sampling plans (*plans.Service).
type Planner interface {
	// Plan plans a trace's sampled simulation and stores the plan, with
	// its strata: NOT_FOUND for an unknown trace, BAD_USER_INPUT for one
	// not READY or a request out of range.
	Plan(ctx context.Context, r plans.Request) (cascade.SamplingPlan, error)
	// SamplingPlan returns a plan without its strata, or NOT_FOUND.
	SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error)
	// SamplingPlans returns a trace's plans, newest first, without strata.
	SamplingPlans(ctx context.Context, traceID string) ([]cascade.SamplingPlan, error)
	// SamplingStrata returns a plan's strata.
	SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error)
	// Untraced is what a plan simulates that its trace has no kernel
	// trace of, nil when it simulates traced launches only.
	Untraced(ctx context.Context, p cascade.SamplingPlan) (*cascade.SamplingUntraced, error)
	// TraceRanges is what to trace of a plan's trace (the plan with its
	// strata) for a trace of only those launches, under simConfig's L2
	// ("" for the largest), the L2 it took, and a note when a window
	// had to be estimated (launches the trace has no kernel trace of).
	TraceRangesNoted(ctx context.Context, p cascade.SamplingPlan, simConfig string) ([]cascade.KernelRange, string, string, error)
	// Evaluate evaluates a plan against a SUCCEEDED full run of its
	// trace: BAD_USER_INPUT for another run.
	Evaluate(ctx context.Context, planID, runID string) (cascade.SamplingEvaluation, error)
	// Estimate estimates a sampled run's wall time under a config; nil
	// when no run of the config can be measured.
	Estimate(ctx context.Context, planID, config string) (*cascade.SamplingWallEstimate, error)
}
