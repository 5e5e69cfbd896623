package plans

import (
	"context"
	"fmt"

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
// See TraceRangesNoted for a trace that lacks some launches' traces.
func (s *Service) TraceRanges(ctx context.Context, p cascade.SamplingPlan, simConfig string) ([]cascade.KernelRange, string, error) {
	ranges, l2, _, err := s.TraceRangesNoted(ctx, p, simConfig)
	return ranges, l2, err
}

// TraceRangesNoted is TraceRanges, and a note ("" for none) when a
// window was estimated. On a trace taken trace-less (Trace.untracedKernels
// > 0) the launches before a segment may have no kernel trace, and their
// footprints are unknown: the warming's walk over the traced launches
// steps over them to older traced ones, which are not what the whole
// trace's warming reads. So a window that meets an untraced launch takes
// the launches right before its segment, traced or not, as many as the
// longest walk over the traced launches took (an untraced launch counted
// as touching as many lines as a traced one: a step of the program
// repeats its kernels; the longest, for a walk cut short at the trace's
// first traced launch counts fewer than the L2 holds), and the note
// says how many untraced launches the windows so take, of how many
// segments: traced too, the next trace holds them, and their footprints
// then measure the windows.
func (s *Service) TraceRangesNoted(ctx context.Context, p cascade.SamplingPlan, simConfig string) ([]cascade.KernelRange, string, string, error) {
	ranges := sampling.Ranges(p)
	if s.Windows == nil || len(ranges) == 0 {
		if simConfig != "" {
			return nil, "", "", cascade.Errorf(cascade.EINVALID, "simConfig: this server warms no segment's L2, so traceRanges need no config")
		}
		return ranges, "", "", nil
	}
	starts := make([]kernellist.Ref, len(ranges))
	for i, r := range ranges {
		starts[i] = kernellist.Ref{ID: r.Start, Context: kernellist.NormalizeContext(cascade.Deref(r.Context))}
	}
	windows, l2, err := s.Windows.WarmWindows(ctx, p.TraceID, simConfig, starts)
	if err != nil {
		return nil, "", "", err
	}
	// An estimated window's length: the longest the walk took, for a
	// window the walk cut short at the trace's first traced launch.
	longest := 0
	for _, w := range windows {
		longest = max(longest, len(w))
	}
	if longest == 0 {
		return ranges, l2, "", nil
	}
	// Where the windows' kernels are in the trace: they precede their
	// segment's first launch, right before it on a trace traced whole. On
	// one lacking launches, with some of those between, and one not
	// found nearby is left out.
	var spans []cascade.KernelRange
	for i := range windows {
		if ranges[i].FirstLaunch > 0 {
			spans = append(spans, cascade.KernelRange{FirstLaunch: max(0, ranges[i].FirstLaunch-2*longest-8), LastLaunch: ranges[i].FirstLaunch - 1})
		}
	}
	if len(spans) == 0 {
		return ranges, l2, "", nil
	}
	launches, err := s.launchesIn(ctx, p.TraceID, spans)
	if err != nil {
		return nil, "", "", err
	}
	var traced []sampling.Traced
	add := func(pos int, l sampling.Launch) {
		t := sampling.Traced{Launch: pos, KernelID: l.KernelID}
		if l.Context != "" {
			t.Context = &l.Context
		}
		traced = append(traced, t)
	}
	untraced, estimated := map[int]bool{}, 0
	for i, w := range windows {
		first := ranges[i].FirstLaunch
		if first == 0 {
			continue
		}
		// The walk stepped over launches the trace lacks when one of the
		// launches right before the segment, as many as it took, is
		// untraced (or it took none, and the launch before is untraced):
		// its window is then estimated, the longest window's launches
		// right before the segment.
		meets := false
		for pos := first - 1; pos >= max(0, first-max(len(w), 1)); pos-- {
			if l, ok := launches[pos]; ok && l.Untraced {
				meets = true
			}
		}
		if meets {
			estimated++
			for pos := first - 1; pos >= max(0, first-longest); pos-- {
				if l, ok := launches[pos]; ok {
					add(pos, l)
					if l.Untraced {
						untraced[pos] = true
					}
				}
			}
			continue
		}
		want := map[kernellist.Ref]bool{}
		for _, r := range w {
			want[r] = true
		}
		for pos := first - 1; pos >= 0 && len(want) > 0; pos-- {
			l, ok := launches[pos]
			if !ok {
				break
			}
			ref := kernellist.Ref{ID: l.KernelID, Context: kernellist.NormalizeContext(l.Context)}
			if !want[ref] {
				continue
			}
			delete(want, ref)
			add(pos, l)
		}
	}
	note := ""
	if estimated > 0 {
		note = fmt.Sprintf("this trace has no kernel trace of %d launches the L2 warming of %d of the plan's %d segments reads: their footprints are unknown, so each of those windows takes the %d launches right before its segment (the most the walk over the traced launches took; an untraced launch counted as touching as many lines as a traced one); trace them, and the next trace's footprints measure the windows",
			len(untraced), estimated, len(ranges), longest)
	}
	return sampling.RangesWarmed(p, traced), l2, note, nil
}
