package sampling

import (
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade"
)

// UntracedOf is what a plan whose ranges are ranges (Ranges) simulates
// that its trace has no kernel trace of: the launches of each range (those
// between its first and last launch of its context with kernel ids
// Start..End, the representatives and their warm-up) that are Untraced,
// compared by context and kernel id, since kernel ids repeat across
// contexts. launch(i) is the trace's launch at position i, ok false when
// it has none there. traceID names the trace in the note. nil when every
// launch the ranges hold is traced.
func UntracedOf(traceID string, ranges []cascade.KernelRange, launch func(i int) (Launch, bool)) *cascade.SamplingUntraced {
	var u cascade.SamplingUntraced
	for _, rg := range ranges {
		ctx := cascade.Deref(rg.Context)
		in := false
		for i := rg.FirstLaunch; i <= rg.LastLaunch; i++ {
			l, ok := launch(i)
			if !ok || !l.Untraced || l.Context != ctx || l.KernelID < rg.Start || l.KernelID > rg.End {
				continue
			}
			u.Count++
			if len(u.Launches) < cascade.MaxUntracedListed {
				u.Launches = append(u.Launches, cascade.UntracedLaunch{Launch: i, KernelID: l.KernelID, Context: rg.Context})
			}
			if !in {
				u.Ranges, in = append(u.Ranges, rg), true
			}
		}
	}
	if u.Count == 0 {
		return nil
	}
	launches := "launches"
	if u.Count == 1 {
		launches = "launch"
	}
	u.Note = fmt.Sprintf("This plan simulates %d %s that trace %q has no kernel trace of (kernel ids %s), in %d of its %d trace ranges: "+
		"the trace holds only the kernel traces of another plan's traceList. A sampled run of this plan is refused; "+
		"plan with the method, target and warm-up of the plan whose traceList the trace was taken with, or trace this plan's traceList.",
		u.Count, launches, traceID, UntracedNames(&u, 20), len(u.Ranges), len(ranges))
	return &u
}

// UntracedNames names the first n launches of u ("4, 9@0x7f00aa"), and
// how many more there are.
func UntracedNames(u *cascade.SamplingUntraced, n int) string {
	names := make([]string, 0, min(n, len(u.Launches)))
	for _, l := range u.Launches[:min(n, len(u.Launches))] {
		names = append(names, l.String())
	}
	s := strings.Join(names, ", ")
	if more := u.Count - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
