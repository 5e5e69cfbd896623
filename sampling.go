package cascade

import (
	"strconv"
	"time"
)

// SamplingMethod is how a sampling plan picks the launches to simulate
// (package sampling).
type SamplingMethod string

// The sampling methods.
const (
	// SamplingSTEM groups launches by kernel name, grid and block, splits
	// each group by measured duration and sizes each cluster's sample by
	// the central limit theorem (STEM+ROOT, MICRO 2025). It needs real
	// timing, and is the default when a trace has it.
	SamplingSTEM SamplingMethod = "STEM"
	// SamplingSieve stratifies launches by kernel name, then by warp
	// instruction count, and simulates one launch a stratum (Sieve,
	// ISPASS 2023). It is the default without real timing.
	SamplingSieve SamplingMethod = "SIEVE"
)

// Valid reports whether m is a method Cascade knows.
func (m SamplingMethod) Valid() bool { return m == SamplingSTEM || m == SamplingSieve }

// SamplingBasis is what a plan's figures (its strata's spread, its
// expected error) are computed on.
type SamplingBasis string

// The bases of a plan's figures.
const (
	// BasisDuration: the launches' measured durations (real timing).
	BasisDuration SamplingBasis = "DURATION"
	// BasisInstructions: the launches' warp instruction counts, for a
	// trace without real timing.
	BasisInstructions SamplingBasis = "INSTRUCTIONS"
)

// SamplingPlan says which launches of a trace to simulate, and how to
// project the others from them: its strata, each a set of launches one
// or a few representatives stand for, and the figures of the whole.
// Launches are named by their position in the trace's kernel list
// (Kernel.Seq).
type SamplingPlan struct {
	ID      string         `gorm:"primaryKey"`
	Seq     int64          `gorm:"not null;uniqueIndex"`
	TraceID string         `gorm:"not null;index"`
	Method  SamplingMethod `gorm:"not null"`
	Basis   SamplingBasis  `gorm:"not null"`
	// TargetError and TargetInstructions are the target asked for: a
	// relative error bound (0.01 for 1 %) or a budget of warp
	// instructions to simulate, warm-up included; nil when not asked.
	TargetError        *float64
	TargetInstructions *int64
	// ErrorBound is the relative error bound (at 95 % confidence) the
	// plan was made for: TargetError, or under a budget the smallest the
	// budget allowed.
	ErrorBound float64 `gorm:"not null"`
	// Warmup is how many launches before each representative (in its
	// CUDA context) are simulated first to warm the caches.
	Warmup int `gorm:"not null"`
	// WarmupStep is set when that warm-up is a step of the program (the
	// launches back to where the same kernels repeat; Warmup is then the
	// step's length) rather than a number of launches asked for.
	WarmupStep bool `gorm:"not null;default:false"`

	// Launches counts the trace's launches; UntimedLaunches those of them
	// without a measured duration on a DURATION plan (they are planned by
	// instruction count and left out of Total and the error).
	Launches        int `gorm:"not null"`
	UntimedLaunches int `gorm:"not null"`
	// Instructions is the warp instructions of every launch.
	Instructions int64 `gorm:"not null"`
	// Samples counts the representatives; SimulatedLaunches the launches
	// to simulate, representatives and their warm-up each counted once,
	// and SimulatedInstructions their warp instructions.
	Samples               int   `gorm:"not null"`
	SimulatedLaunches     int   `gorm:"not null"`
	SimulatedInstructions int64 `gorm:"not null"`
	// SimulatedFraction is SimulatedInstructions / Instructions (of
	// launches when no launch counted instructions).
	SimulatedFraction float64 `gorm:"not null"`

	// Total is the basis summed over the launches planned by it (ns of
	// measured time, or warp instructions); Estimate is the same total
	// projected from the representatives alone, as a sampled run's would
	// be. ExpectedError is the half-width of the 95 % confidence interval
	// of the projected total relative to Total, and [CILow, CIHigh] that
	// interval around Estimate.
	Total         float64 `gorm:"not null"`
	Estimate      float64 `gorm:"not null"`
	ExpectedError float64 `gorm:"not null"`
	CILow         float64 `gorm:"column:ci_low;not null"`
	CIHigh        float64 `gorm:"column:ci_high;not null"`

	CreatedAt time.Time

	// Strata are the plan's strata, in plan order; not in the plan's row
	// (a store reads them on their own).
	Strata []SamplingStratum `gorm:"-"`

	// Untraced is what the plan simulates that its trace has no kernel
	// trace of; nil when it simulates traced launches only. Not stored:
	// the planner fills it when it makes a plan, and computes it again
	// when asked (it depends on the trace's kernel traces, not on the
	// plan alone).
	Untraced *SamplingUntraced `gorm:"-"`
}

// SamplingUntraced is what a plan would simulate of a trace that holds
// only some kernel traces (Trace.UntracedKernels > 0: one taken with a
// plan's traceList) without a kernel trace: a plan of another method,
// target or warm-up than the one traced takes representatives or warm-up
// outside the traced ranges. A sampled run of it is refused.
type SamplingUntraced struct {
	// Count is how many of the launches the plan simulates
	// (representatives and their warm-up) are untraced; Launches the
	// first MaxUntracedListed of them, in launch order.
	Count    int
	Launches []UntracedLaunch
	// Ranges are the plan's ranges (its traceRanges) that hold them.
	Ranges []KernelRange
	// Note says it in a sentence, with what to do.
	Note string
}

// MaxUntracedListed is how many untraced launches a SamplingUntraced
// names.
const MaxUntracedListed = 100

// UntracedLaunch is a launch of a trace without a kernel trace: its
// position in the kernel list, its kernel id and its CUDA context (nil
// for a single-context trace). Kernel ids repeat across contexts: the
// two name a launch together.
type UntracedLaunch struct {
	Launch   int
	KernelID int
	Context  *string
}

// String is "9" or "9@0x7f00aa", as the tracer's kernel-9-ctx_0x7f00aa
// names it.
func (l UntracedLaunch) String() string {
	if l.Context == nil || *l.Context == "" {
		return strconv.Itoa(l.KernelID)
	}
	return strconv.Itoa(l.KernelID) + "@" + *l.Context
}

// SamplingStratum is a set of launches of one kernel that a few
// representatives stand for.
type SamplingStratum struct {
	Name string
	// Grid and Block are the launches' sizes; nil when they differ (a
	// Sieve stratum holds every launch of a name).
	Grid, Block *Dim3
	// Size counts the launches; Members are their positions, ascending.
	Size    int
	Members []int32
	// MeanDurationNs and CVDuration are the mean and coefficient of
	// variation (standard deviation / mean) of the members' measured
	// durations; nil when none was measured.
	MeanDurationNs *float64
	CVDuration     *float64
	// MeanInstructions and CVInstructions are the same of their warp
	// instruction counts.
	MeanInstructions float64
	CVInstructions   float64
	Representatives  []SamplingRepresentative
	// Why says why it has the representatives it has.
	Why SamplingAllocation
	// Allocation is the representatives Neyman's allocation gave it
	// before it was rounded up and clamped to [1, Size] (STEM; 0 for
	// SIEVE, which takes one a stratum).
	Allocation float64
	// Cost is the warp instructions its representatives add to the
	// simulation, warm-up included, less what earlier strata simulate
	// already (a representative warmed by another's launches costs only
	// itself).
	Cost int64
	// VarianceShare is its share of the variance of the plan's projected
	// total.
	VarianceShare float64
}

// SamplingAllocation is why a stratum has the representatives it has.
type SamplingAllocation string

// The reasons.
const (
	// AllocNeyman: its share of the least-cost allocation that meets the
	// bound on the total, rounded up.
	AllocNeyman SamplingAllocation = "NEYMAN"
	// AllocLeast: one, the least a stratum takes (the allocation asked
	// for less).
	AllocLeast SamplingAllocation = "LEAST"
	// AllocSpread: one more than the allocation, so that a sampled run
	// measures the simulator's spread between launches of one kernel.
	AllocSpread SamplingAllocation = "SPREAD"
	// AllocAll: every launch (the allocation asked for as many).
	AllocAll SamplingAllocation = "ALL"
	// AllocUntimed: one, launches without a measured duration (STEM).
	AllocUntimed SamplingAllocation = "UNTIMED"
	// AllocSieve: Sieve's one a stratum, the stratum split until the
	// bound is met.
	AllocSieve SamplingAllocation = "SIEVE"
)

// SamplingRepresentative is a launch to simulate, standing for Weight
// launches of its stratum (its Size / its representatives).
type SamplingRepresentative struct {
	Launch       int // position in the trace's kernel list
	KernelID     int
	Context      *string
	Weight       float64
	DurationNs   *float64 // measured; nil when not
	Instructions int64
	// Warmup are the launches to simulate before it, oldest first: the
	// ones just before it in its context.
	Warmup []SamplingLaunch
}

// SamplingLaunch names a launch of a trace: its position and kernel id
// (in the context of the representative it warms up).
type SamplingLaunch struct {
	Launch   int
	KernelID int
}

// KernelRange is a contiguous run of kernel ids of one CUDA context to
// trace: the NVBit tracer's DYNAMIC_KERNEL_LIMIT_START and
// DYNAMIC_KERNEL_LIMIT_END (both inclusive).
type KernelRange struct {
	Context *string
	// Start and End are the first and last kernel ids; FirstLaunch and
	// LastLaunch their positions in the trace's kernel list.
	Start, End              int
	FirstLaunch, LastLaunch int
	// Launches counts the range's launches; Representatives those of
	// them that are representatives it counts (the others warm up).
	Launches        int
	Representatives int
	// Warmup counts the range's launches before its first
	// representative it counts: simulated only to warm up what follows.
	// The second part of a cut segment (sampling.CutRanges) warms up
	// with launches of the first, representatives among them.
	Warmup int
	// Warming counts launches to trace only (never simulated) because
	// the L2 warming before a segment reads their lines: with them, a
	// trace taken with only a plan's ranges warms each segment as the
	// whole trace does (a plan's traceRanges; 0 in a run's segments).
	Warming int
}

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
	// SegmentWarmups are, by segment, its launches before its first
	// representative it counts (KernelRange.Warmup), whose results are
	// not read from it; absent from runs stored before they were kept.
	SegmentWarmups []int `json:"segmentWarmups,omitempty"`

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

// SamplingEvaluation is a plan evaluated against a full run (RunID):
// what a sampled run of it would have projected had each representative
// simulated as it did in that run.
type SamplingEvaluation struct {
	// RunID is the full run; "" when evaluated against cycles alone.
	RunID string
	// Projected is the projected total and [Low, High] its 95 %
	// interval, as the sampled run would state it.
	Projected, Low, High float64
	// Full is the full run's total.
	Full float64
	// Error is (Projected − Full) / Full; HalfWidth the interval's
	// half-width relative to Projected (the error the run states), and
	// SamplingHalfWidth its part of the representatives' spread, without
	// the warm-up allowance.
	Error, HalfWidth, SamplingHalfWidth float64
	// Inside reports whether Full lies in [Low, High]; InsideSampling
	// whether it lies within SamplingHalfWidth of Projected: with every
	// representative's cycles its full-run ones, warmed by every launch
	// before it, that is the interval an evaluation tests.
	Inside, InsideSampling bool
}

// SamplingWallEstimate is the estimated wall time of a sampled run of a
// plan under a config on this server, against a full run's (package
// sampling/plans, Estimate; docs/sampling.md, "Sampled runs").
type SamplingWallEstimate struct {
	Config string
	// Runs is how many finished runs of the config the rate was
	// measured from; InstructionsPerSecond the warp instructions the
	// simulator simulates a second, and StartupSeconds what a process
	// takes besides them, nil when it was not measured.
	Runs                  int
	InstructionsPerSecond float64
	StartupSeconds        *float64
	// Segments is how many simulator processes the sampled run runs,
	// Concurrency how many at once, ConcurrencyNote how that was decided.
	Segments, Concurrency int
	ConcurrencyNote       string
	// Seconds is the sampled run's wall time, ProcessSeconds its
	// segments' times summed, FullSeconds a full run's.
	Seconds, ProcessSeconds, FullSeconds float64
	// MeasuredFullSeconds is the wall time of the newest measured run
	// that is a full run of the plan's trace; nil for none.
	MeasuredFullSeconds *float64
}

// Speedup is the full run's estimated wall time over the sampled run's.
func (e SamplingWallEstimate) Speedup() float64 {
	if e.Seconds <= 0 {
		return 0
	}
	return e.FullSeconds / e.Seconds
}
