// Package plans makes, stores and reads sampling plans: it reads a ready
// trace's kernel list from the store and its measured timing from the
// bucket, joins them into package sampling's input, plans, and stores the
// plan. It reads no kernel trace: a trace that holds only the kernel
// traces of a plan's launches, with every launch's stats and timing,
// plans and projects as well as the full one. What to trace for such a
// trace (TraceRanges) adds the launches the L2 warming before each
// segment reads, which its WindowReader finds in the kernel traces.
package plans

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/tracedir"
)

// Store is what plans asks of the database (*db.DB).
type Store interface {
	// Trace returns the trace with the given id, or a NOT_FOUND error.
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error)
	// CreateSamplingPlan stores a plan with its ID, assigning its Seq
	// and CreatedAt; NOT_FOUND when its trace is gone.
	CreateSamplingPlan(ctx context.Context, p *cascade.SamplingPlan) error
	// SamplingPlan returns a plan without its strata, or NOT_FOUND.
	SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error)
	// SamplingPlans returns a trace's plans, newest first, without strata.
	SamplingPlans(ctx context.Context, traceID string) ([]cascade.SamplingPlan, error)
	// SamplingStrata returns a plan's strata, members and all.
	SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error)
}

// Service makes and reads sampling plans.
type Service struct {
	Store Store
	// BucketDir holds the trace directories, each named by its trace id.
	BucketDir string
	// Runs reads the full runs plans are evaluated against (Evaluate),
	// and the runs the simulator's rate is measured from (Estimate).
	Runs RunReader
	// Concurrency says how many simulators this server runs at once (0:
	// as many as are queued) and how it decides, for Estimate; nil is
	// one at a time.
	Concurrency func() (slots int, note string)
	// Windows says which launches segments' L2 warming reads, for
	// TraceRanges; nil: none.
	Windows WindowReader
	// Configs resolves the config Estimate is asked for; nil takes any
	// name.
	Configs ConfigReader
}

// ConfigReader resolves a config's name (*runs.Configs).
type ConfigReader interface {
	// Variant returns the config a run of name would launch with, or
	// BAD_USER_INPUT "simConfig: …" saying why there is none it can
	// launch with (no such config, or one that cannot be used: the
	// simulator refuses it, it has no trace.config, …).
	Variant(ctx context.Context, name string, params []cascade.SimParam) (cascade.SimConfig, error)
}

// Request asks for a plan of a trace.
type Request struct {
	TraceID string
	// Method is the method to plan with; "" for the default: STEM when
	// the trace has real timing, else Sieve.
	Method cascade.SamplingMethod
	Target sampling.Target
	// Warmup is how many launches warm up each representative; nil for
	// one step of the program (sampling.WarmupStep), the default.
	Warmup *int
	// WarmupStep asks for the default, one step, by name; it excludes
	// Warmup.
	WarmupStep bool
}

// Plan plans the trace's sampled simulation as r asks, and stores the
// plan. A trace that is not there is NOT_FOUND, one that is not READY
// CONFLICT (as launchRun's, each naming traceId); an unknown method or a
// target out of range is BAD_USER_INPUT. On a trace
// with untraced launches the plan's Untraced says what it would simulate
// without a kernel trace (a plan of other settings than the one traced).
func (s *Service) Plan(ctx context.Context, r Request) (cascade.SamplingPlan, error) {
	if r.Method != "" && !r.Method.Valid() {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.EINVALID, "method: unknown sampling method %q (want STEM or SIEVE)", r.Method)
	}
	if err := r.Target.Check(); err != nil {
		return cascade.SamplingPlan{}, err
	}
	// The default: a step of the program, the warm-up that keeps a
	// representative's caches as the full run has them (docs/sampling.md).
	warmup, step := sampling.WarmupStep, r.Warmup == nil
	if r.Warmup != nil {
		warmup = *r.Warmup
	}
	if !step && (warmup < 0 || warmup > sampling.MaxWarmup) {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.EINVALID, "warmup: must be 0 to %d launches, got %d", sampling.MaxWarmup, warmup)
	}
	if r.WarmupStep && r.Warmup != nil {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.EINVALID, "warmupStep: give warmup or warmupStep, not both")
	}
	t, err := s.Store.Trace(ctx, r.TraceID)
	if cascade.ErrorCode(err) == cascade.ENOTFOUND {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.ENOTFOUND, "traceId: trace %q not found", r.TraceID)
	} else if err != nil {
		return cascade.SamplingPlan{}, err
	}
	if t.State != cascade.TraceReady {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.ECONFLICT, "traceId: trace %q %s: only a READY trace can be planned", t.ID, t.State.Is())
	}
	in, err := s.Input(ctx, t)
	if err != nil {
		return cascade.SamplingPlan{}, err
	}
	if len(in.Launches) == 0 {
		return cascade.SamplingPlan{}, cascade.Errorf(cascade.EINVALID, "traceId: trace %q has no kernels to plan", t.ID)
	}
	m, err := sampling.New(r.Method, in, warmup)
	if err != nil {
		return cascade.SamplingPlan{}, err
	}
	p, err := m.Plan(in, r.Target)
	if err != nil {
		return cascade.SamplingPlan{}, err
	}
	p.ID, p.TraceID, p.WarmupStep = cascade.NewID(cascade.PlanIDPrefix), t.ID, step
	if err := s.Store.CreateSamplingPlan(ctx, &p); err != nil {
		return cascade.SamplingPlan{}, err
	}
	if t.UntracedKernels > 0 {
		p.Untraced = sampling.UntracedOf(t.ID, sampling.Ranges(p), func(i int) (sampling.Launch, bool) {
			if i < 0 || i >= len(in.Launches) {
				return sampling.Launch{}, false
			}
			return in.Launches[i], true
		})
	}
	return p, nil
}

// Untraced is what plan p simulates that its trace has no kernel trace
// of (sampling.UntracedOf), nil when it simulates traced launches only,
// as every plan of a trace traced whole does. It reads the trace's row,
// and only on a trace with untraced launches (Trace.UntracedKernels) the
// plan's strata (unless p has them) and the stored launches its ranges
// span, one query a range or fewer: not the whole kernel list.
func (s *Service) Untraced(ctx context.Context, p cascade.SamplingPlan) (*cascade.SamplingUntraced, error) {
	t, err := s.Store.Trace(ctx, p.TraceID)
	if err != nil || t.UntracedKernels == 0 {
		return nil, err
	}
	if p.Strata == nil {
		if p.Strata, err = s.Store.SamplingStrata(ctx, p.ID); err != nil {
			return nil, fmt.Errorf("read plan %s: %w", p.ID, err)
		}
	}
	ranges := sampling.Ranges(p)
	launches, err := s.launchesIn(ctx, t.ID, ranges)
	if err != nil {
		return nil, err
	}
	return sampling.UntracedOf(t.ID, ranges, func(i int) (sampling.Launch, bool) {
		l, ok := launches[i]
		return l, ok
	}), nil
}

// spanGap is how many launches apart launchesIn reads two ranges'
// spans in one query.
const spanGap = 256

// launchesIn reads the stored launches the ranges span (from each one's
// first launch to its last, other contexts' included), by position, with
// what UntracedOf compares: kernel id, context and Untraced. Spans at
// most spanGap launches apart are read together (a query costs about as
// much as reading that many rows more).
func (s *Service) launchesIn(ctx context.Context, traceID string, ranges []cascade.KernelRange) (map[int]sampling.Launch, error) {
	type span struct{ from, to int } // to exclusive
	var spans []span
	for _, rg := range slices.SortedFunc(slices.Values(ranges), func(a, b cascade.KernelRange) int { return a.FirstLaunch - b.FirstLaunch }) {
		if n := len(spans); n > 0 && rg.FirstLaunch-spans[n-1].to <= spanGap {
			spans[n-1].to = max(spans[n-1].to, rg.LastLaunch+1)
			continue
		}
		spans = append(spans, span{rg.FirstLaunch, rg.LastLaunch + 1})
	}
	out := map[int]sampling.Launch{}
	for _, sp := range spans {
		for from := sp.from; from < sp.to; {
			p := cascade.Page{First: min(sp.to-from, cascade.MaxPageSize)}
			if from > 0 {
				p.After = cascade.Cursor(int64(from - 1))
			}
			page, err := s.Store.Kernels(ctx, traceID, "", p)
			if err != nil {
				return nil, fmt.Errorf("read kernels of %s: %w", traceID, err)
			}
			for _, k := range page.Items {
				out[k.Seq] = sampling.Launch{KernelID: k.KernelID, Context: cascade.Deref(k.Context), Untraced: k.Untraced}
			}
			if !page.HasNext || len(page.Items) == 0 {
				break
			}
			from = page.Items[len(page.Items)-1].Seq + 1
		}
	}
	return out, nil
}

// SamplingPlan returns the plan with the given id, without its strata, or
// a NOT_FOUND error.
func (s *Service) SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error) {
	return s.Store.SamplingPlan(ctx, id)
}

// SamplingPlans returns the plans of a trace, newest first.
func (s *Service) SamplingPlans(ctx context.Context, traceID string) ([]cascade.SamplingPlan, error) {
	return s.Store.SamplingPlans(ctx, traceID)
}

// SamplingStrata returns the strata of a plan.
func (s *Service) SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error) {
	return s.Store.SamplingStrata(ctx, planID)
}

// Input is what a plan of trace t is made from: its kernel list, as the
// store holds it, each kernel with its measured duration when t has real
// timing. It reads the store a page at a time and the bucket's timing
// file, nothing else.
func (s *Service) Input(ctx context.Context, t cascade.Trace) (sampling.Input, error) {
	var tm timing
	if t.HasRealTiming {
		var err error
		if tm, err = s.readTiming(t.ID); err != nil {
			return sampling.Input{}, err
		}
	}
	var in sampling.Input
	names := map[string]string{} // one copy of each name and context
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	normalized := map[string]string{} // each context as timing rows spell it
	norm := func(ctx string) string {
		n, ok := normalized[ctx]
		if !ok {
			n = kernellist.NormalizeContext(ctx)
			normalized[ctx] = n
		}
		return n
	}
	p := cascade.Page{First: cascade.MaxPageSize}
	for {
		page, err := s.Store.Kernels(ctx, t.ID, "", p)
		if err != nil {
			return sampling.Input{}, fmt.Errorf("read kernels of %s: %w", t.ID, err)
		}
		for i := range page.Items {
			k := &page.Items[i]
			if k.Seq != len(in.Launches) {
				return sampling.Input{}, fmt.Errorf("read kernels of %s: kernel %d at position %d: the list changed while it was read", t.ID, k.Seq, len(in.Launches))
			}
			l := sampling.Launch{
				KernelID: k.KernelID, Context: intern(cascade.Deref(k.Context)), Name: intern(k.Name),
				Grid: k.Grid(), Block: k.Block(), WarpInstructions: cascade.Deref(k.Instructions),
				Untraced: k.Untraced,
			}
			if l.Context == "" {
				l.DurationNs = tm.duration(k.KernelID, "")
			} else {
				l.DurationNs = tm.duration(k.KernelID, norm(l.Context))
			}
			in.Launches = append(in.Launches, l)
		}
		if !page.HasNext || len(page.Items) == 0 {
			return in, nil
		}
		p.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
	}
}

func (s *Service) readTiming(traceID string) (timing, error) {
	path, err := tracedir.RealTimingPath(filepath.Join(s.BucketDir, traceID))
	if err != nil {
		return timing{}, fmt.Errorf("real timing of %s: %w", traceID, err)
	}
	rt, err := tracedir.ReadRealTiming(path)
	if err != nil {
		return timing{}, err
	}
	return newTiming(rt.Rows), nil
}

// timing is measured durations by kernel, joined as package runs joins
// them to a run's kernels (runs.Compare): a kernel with a context takes
// the rows of its id naming its context when there are any, else those of
// its id naming none; a kernel without a context takes every row of its
// id. Several rows of one kernel measure one launch: their mean is its
// duration. Rows without duration_ns take no part.
type timing struct {
	exact map[ref]mean // rows naming a context
	loose map[int]mean // rows naming none
	any   map[int]mean // every row
}

type ref struct {
	id  int
	ctx string
}

type mean struct {
	sum float64
	n   int
}

func (m *mean) add(x float64) { m.sum += x; m.n++ }

func newTiming(rows []tracedir.TimingRow) timing {
	tm := timing{exact: map[ref]mean{}, loose: map[int]mean{}, any: map[int]mean{}}
	for _, r := range rows {
		if r.DurationNs == nil {
			continue
		}
		d := *r.DurationNs
		if r.Context != "" {
			m := tm.exact[ref{r.KernelID, r.Context}]
			m.add(d)
			tm.exact[ref{r.KernelID, r.Context}] = m
		} else {
			m := tm.loose[r.KernelID]
			m.add(d)
			tm.loose[r.KernelID] = m
		}
		m := tm.any[r.KernelID]
		m.add(d)
		tm.any[r.KernelID] = m
	}
	return tm
}

// duration is the measured duration of the kernel with the given id and
// context (normalized, as kernellist.NormalizeContext spells it); 0 for
// none.
func (tm timing) duration(id int, ctx string) float64 {
	var m mean
	if ctx == "" {
		m = tm.any[id]
	} else if m = tm.exact[ref{id, ctx}]; m.n == 0 {
		m = tm.loose[id]
	}
	if m.n == 0 {
		return 0
	}
	return m.sum / float64(m.n)
}
