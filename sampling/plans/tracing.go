package plans

import (
	"context"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/sampling"
)

// WindowReader reads which launches the L2 warming before a sampled
// run's segments reads (*runs.Manager, which warms them).
type WindowReader interface {
	// WarmWindows returns, for each of starts (a segment's first kernel),
	// the kernels whose lines its warming reads under simConfig's L2 ("":
	// the largest of the server's configs), latest first, and the config
	// it took as "name (L2 n KB)"; none when no config keeps L2 between
	// kernels. A simConfig that is not one is BAD_USER_INPUT.
	WarmWindows(ctx context.Context, traceID, simConfig string, starts []kernellist.Ref) ([][]kernellist.Ref, string, error)
}

// TraceRanges returns what to trace of p's trace (p with its strata) so
// that a trace of only those launches simulates sampled as the whole
// trace does: p's ranges (sampling.Ranges) and the launches before each
// segment whose lines its L2 warming reads (sampling.RangesWarmed), under
// simConfig's L2 or, for "", the largest of the server's configs (a
// smaller L2 reads fewer of them). It returns the L2 taken ("" when none
// is warmed). It reads the footprints of those launches' kernel traces.
func (s *Service) TraceRanges(ctx context.Context, p cascade.SamplingPlan, simConfig string) ([]cascade.KernelRange, string, error) {
	ranges := sampling.Ranges(p)
	if s.Windows == nil || len(ranges) == 0 {
		if simConfig != "" {
			return nil, "", cascade.Errorf(cascade.EINVALID, "simConfig: this server warms no segment's L2, so traceRanges need no config")
		}
		return ranges, "", nil
	}
	starts := make([]kernellist.Ref, len(ranges))
	for i, r := range ranges {
		starts[i] = kernellist.Ref{ID: r.Start, Context: kernellist.NormalizeContext(cascade.Deref(r.Context))}
	}
	windows, l2, err := s.Windows.WarmWindows(ctx, p.TraceID, simConfig, starts)
	if err != nil {
		return nil, "", err
	}
	// Where the windows' kernels are in the trace: they precede their
	// segment's first launch, right before it on a trace traced whole. On
	// one lacking launches, with some of those between, and one not
	// found nearby is left out (its segments then warm in part, and say
	// so).
	var spans []cascade.KernelRange
	for i, w := range windows {
		if len(w) > 0 && ranges[i].FirstLaunch > 0 {
			spans = append(spans, cascade.KernelRange{FirstLaunch: max(0, ranges[i].FirstLaunch-2*len(w)-8), LastLaunch: ranges[i].FirstLaunch - 1})
		}
	}
	if len(spans) == 0 {
		return ranges, l2, nil
	}
	launches, err := s.launchesIn(ctx, p.TraceID, spans)
	if err != nil {
		return nil, "", err
	}
	var traced []sampling.Traced
	for i, w := range windows {
		want := map[kernellist.Ref]bool{}
		for _, r := range w {
			want[r] = true
		}
		for pos := ranges[i].FirstLaunch - 1; pos >= 0 && len(want) > 0; pos-- {
			l, ok := launches[pos]
			if !ok {
				break
			}
			ref := kernellist.Ref{ID: l.KernelID, Context: kernellist.NormalizeContext(l.Context)}
			if !want[ref] {
				continue
			}
			delete(want, ref)
			t := sampling.Traced{Launch: pos, KernelID: l.KernelID}
			if l.Context != "" {
				t.Context = &l.Context
			}
			traced = append(traced, t)
		}
	}
	return sampling.RangesWarmed(p, traced), l2, nil
}
