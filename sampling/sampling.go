package sampling

import (
	"math"

	"github.com/cascade-sim/cascade"
)

// Plan is a sampling plan: its strata, their representatives and the
// figures of the whole (see cascade.SamplingPlan). A Method fills every
// field but the stored ones (ID, Seq, TraceID, CreatedAt).
type Plan = cascade.SamplingPlan

// Method makes sampling plans. STEM and Sieve are the methods.
type Method interface {
	// Plan plans the sampled simulation of in's launches to meet target.
	// An input or target it cannot plan for is a BAD_USER_INPUT
	// *cascade.Error.
	Plan(in Input, target Target) (Plan, error)
}

// Launch is one kernel launch as planning sees it.
type Launch struct {
	KernelID int
	Context  string // "" for a single-context trace
	Name     string
	Grid     cascade.Dim3
	Block    cascade.Dim3
	// WarpInstructions is the tracer's instruction count (total_insts):
	// one for each instruction a warp executed.
	WarpInstructions int64
	// DurationNs is the measured duration; 0 when the launch has none (a
	// measured duration is > 0).
	DurationNs float64
	// Untraced: the trace has no kernel trace of this launch (taken with
	// the tracer's DYNAMIC_KERNEL_LIMIT ranges, see cascade.Kernel): it
	// is planned and projected as any, but cannot be simulated.
	Untraced bool
}

// Timed reports whether the launch has a measured duration.
func (l *Launch) Timed() bool { return l.DurationNs > 0 && !math.IsInf(l.DurationNs, 1) }

// instructions is the launch's warp instructions, 0 for a count below 0.
func (l *Launch) instructions() int64 { return max(l.WarpInstructions, 0) }

// Input is what a plan is made from: a trace's launches in order. A
// launch's index in Launches is its position in the trace's kernel list
// (cascade.Kernel.Seq), and plans name launches by it.
type Input struct {
	Launches []Launch
}

// HasTiming reports whether any launch has a measured duration.
func (in Input) HasTiming() bool {
	for i := range in.Launches {
		if in.Launches[i].Timed() {
			return true
		}
	}
	return false
}

// Target is what a plan aims for: a relative error bound of the projected
// total, or a budget of warp instructions to simulate. The zero Target is
// DefaultError.
type Target struct {
	// Error is the relative error (0.01 for 1 %) the projected total may
	// be off by at 95 % confidence; 0 for DefaultError.
	Error float64
	// Instructions, when > 0, is a budget of warp instructions to
	// simulate, warm-up included: the plan then has the smallest error
	// bound whose plan fits it. It excludes Error.
	Instructions int64
}

// Planning's constants.
const (
	// DefaultError is the error bound of the zero Target: 1 %.
	DefaultError = 0.01
	// MinError is the smallest error bound a budget searches down to.
	MinError = 1e-4
	// DefaultWarmup is how many launches warm up each representative
	// when a method's Warmup is 0; NoWarmup asks for none, and MaxWarmup
	// is the most a method takes.
	DefaultWarmup = 1
	NoWarmup      = -1
	MaxWarmup     = 64
	// WarmupStep asks for one step of the traced program as each
	// representative's warm-up: Period(in) launches, so that the caches
	// hold what the step before it left (a model layer's weights, read
	// once a step, included); but no more warp instructions than a step
	// of launches of the trace's mean size (always the launch before
	// it): a step of larger kernels (a prefill) rewrites the caches with
	// its own traffic, and a launch or two before is what its
	// representatives need.
	WarmupStep = -2
	// SimSpread is the simulator's spread, relative, between launches
	// of one kernel, grid and block beyond what their measured durations
	// explain (cache state, scheduling): a plan counts it in each
	// stratum's spread, and a projection takes it as PriorWeight degrees
	// of freedom of prior for the spread it measures among the simulated
	// launches. With PriorWeight it is the prior fitted to the real
	// Accel-Sim's full runs of testdata/fullruns (TestSpreadPrior): each
	// run's pooled spread (six shapes, two configs, with the launches
	// after a heavy step as heavyStrata keeps them) taken as a draw of a
	// scaled inverse χ², whose scale (0.281 %) and degrees of freedom
	// (10.9) of largest likelihood these are. Fitted first to three
	// shapes (0.305 %, 9.1), the prior held only 91.3 % of plans of the
	// three shapes added after (quiet, default, requests) inside their
	// intervals; fitted to all eleven runs before launches after a heavy
	// step were kept apart it was 0.339 %, 4.5, and with every one of
	// them apart 0.264 %, 9.4: docs/sampling-benchmarks.md.
	SimSpread = 0.00281
	// TimingWeight is the share of a stratum's spread of measured
	// durations a STEM plan counts as spread the simulator will show too.
	// A GPU's timing noise (a few %) is invisible to the simulator, which
	// simulates the same kernel of the same work within a few tenths of
	// a % each time (SimSpread), and a projection is on the work, not the
	// time (Project); but launches slower for a cause the simulator does
	// model (a cold cache, another mode of the kernel) are slower in both.
	// A tenth keeps modes of the duration apart without paying for noise.
	TimingWeight = 0.1
	// PriorWeight is how many degrees of freedom SimSpread counts for
	// in a projection's pooled spread: how far one run's spread is from
	// another's (fitted with SimSpread).
	PriorWeight = 10.9
	// z95 is the standard normal quantile of a two-sided 95 % interval.
	z95 = 1.959963984540054
)

// Check returns the BAD_USER_INPUT error of a target no method takes,
// nil for one they do: a caller may check before reading a trace.
func (t Target) Check() error {
	_, err := t.errorBound()
	return err
}

// errorBound checks t and returns the error bound it asks for (0 under
// a budget).
func (t Target) errorBound() (float64, error) {
	switch {
	case t.Instructions < 0:
		return 0, cascade.Errorf(cascade.EINVALID, "target: instructions must be > 0, got %d", t.Instructions)
	case t.Instructions > 0 && t.Error != 0:
		return 0, cascade.Errorf(cascade.EINVALID, "target: give an error bound or a budget of instructions, not both")
	case t.Instructions > 0:
		return 0, nil
	case t.Error == 0:
		return DefaultError, nil
	case !(t.Error > 0 && t.Error < 1):
		return 0, cascade.Errorf(cascade.EINVALID, "target: error must be > 0 and < 1 (0.01 is 1 %%), got %g", t.Error)
	}
	return t.Error, nil
}

// warmupCount is the warm-up a method's Warmup field asks for, planning
// in.
func warmupCount(w int, in Input) (int, error) {
	switch {
	case w == 0:
		return DefaultWarmup, nil
	case w == NoWarmup:
		return 0, nil
	case w == WarmupStep:
		return Period(in), nil
	case w < 0 || w > MaxWarmup:
		return 0, cascade.Errorf(cascade.EINVALID, "warmup: must be 0 to %d launches, got %d", MaxWarmup, w)
	}
	return w, nil
}

// Default is the method for in: STEM when a launch has a measured
// duration, else Sieve, each with its default parameters.
func Default(in Input) Method {
	if in.HasTiming() {
		return STEM{}
	}
	return Sieve{}
}

// New returns the method m (Default's for "") with warmup launches before
// each representative: 0 for none, WarmupStep for one step (Period).
func New(m cascade.SamplingMethod, in Input, warmup int) (Method, error) {
	if (warmup < 0 || warmup > MaxWarmup) && warmup != WarmupStep {
		return nil, cascade.Errorf(cascade.EINVALID, "warmup: must be 0 to %d launches, got %d", MaxWarmup, warmup)
	}
	if warmup == 0 {
		warmup = NoWarmup
	}
	if m == "" {
		m = MethodOf(Default(in))
	}
	switch m {
	case cascade.SamplingSTEM:
		return STEM{Warmup: warmup}, nil
	case cascade.SamplingSieve:
		return Sieve{Warmup: warmup}, nil
	}
	return nil, cascade.Errorf(cascade.EINVALID, "method: unknown sampling method %q (want STEM or SIEVE)", m)
}

// MethodOf is the name of a method of this package; "" for another.
func MethodOf(m Method) cascade.SamplingMethod {
	switch m.(type) {
	case STEM, *STEM:
		return cascade.SamplingSTEM
	case Sieve, *Sieve:
		return cascade.SamplingSieve
	}
	return ""
}

// periodMatch is the share of launches whose kernel name is that of the
// launch a period before it, from which Period takes a period.
const periodMatch = 0.9

// periodScan is how many launches Period reads: a period shows in the
// first ones.
const periodScan = 100_000

// Period is the length of the traced program's step in launches: the
// smallest p ≤ MaxWarmup such that at least 90 % of launches (of the
// first 100,000) have the kernel name of the launch p before them in
// their context. A model's decode step launches the same kernels in the
// same order every step, so p is one step (a layer when the step is no
// more than its layers). DefaultWarmup when no p fits.
func Period(in Input) int {
	ls := in.Launches[:min(len(in.Launches), periodScan)]
	for p := 1; p <= MaxWarmup && p < len(ls); p++ {
		n := len(ls) - p
		allowed := int(float64(n) * (1 - periodMatch))
		miss := 0
		for i := p; i < len(ls) && miss <= allowed; i++ {
			if ls[i].Name != ls[i-p].Name || ls[i].Context != ls[i-p].Context {
				miss++
			}
		}
		if miss <= allowed {
			return p
		}
	}
	return DefaultWarmup
}
