package sampling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
)

// Tracing less next time: a plan names the few launches a trace needs
// kernel traces of (its representatives and their warm-up), so the next
// trace of the same program can hold only those, with the stats and real
// timing of every launch. The Accel-Sim NVBit tracer (tracer_tool.so)
// traces one contiguous range of kernel ids a run: it reads
// DYNAMIC_KERNEL_LIMIT_START and DYNAMIC_KERNEL_LIMIT_END once, at start,
// turns tracing on at the launch whose id is START and off after the one
// whose id is END (ids count from 1; in 2025+ tracers, per CUDA context),
// and, with TERMINATE_UPON_LIMIT=1, ends the program past END. It writes
// every MemcpyHtoD line, traced range or not.

// Ranges returns the kernel ids to trace for p: one range per run of
// launches to simulate that are adjacent (consecutive kernel ids of one
// context), in launch order. A sampled run simulates each as a segment.
func Ranges(p Plan) []cascade.KernelRange { return RangesWarmed(p, nil) }

// Traced is a launch to trace that is not simulated: one whose lines the
// L2 warming before a segment reads (KernelRange.Warming).
type Traced struct {
	Launch, KernelID int
	Context          *string
}

// RangesWarmed is Ranges with the launches of warming besides, merged
// into the ranges they adjoin: the kernel ids to trace so that a trace of
// only those warms each segment as the whole trace does.
func RangesWarmed(p Plan, warming []Traced) []cascade.KernelRange {
	const (
		rep = iota // the order a launch of several kinds is counted as
		warm
		traced
	)
	type item struct {
		launch, id int
		ctx        *string
		kind       int
	}
	var items []item
	for h := range p.Strata {
		for _, r := range p.Strata[h].Representatives {
			items = append(items, item{r.Launch, r.KernelID, r.Context, rep})
			for _, w := range r.Warmup {
				items = append(items, item{w.Launch, w.KernelID, r.Context, warm})
			}
		}
	}
	for _, w := range warming {
		items = append(items, item{w.Launch, w.KernelID, w.Context, traced})
	}
	// By launch, a representative first: a launch both warms one up and
	// represents counts as a representative, once.
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.launch, b.launch); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
	items = slices.CompactFunc(items, func(a, b item) bool { return a.launch == b.launch })
	var out []cascade.KernelRange
	for _, it := range items {
		var reps, warmup, warming int
		switch it.kind {
		case rep:
			reps = 1
		case warm:
			warmup = 1
		default:
			warming = 1
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if cascade.Deref(last.Context) == cascade.Deref(it.ctx) && it.id == last.End+1 {
				last.End, last.LastLaunch = it.id, it.launch
				if last.Representatives == 0 {
					last.Warmup += warmup
				}
				last.Launches++
				last.Representatives += reps
				last.Warming += warming
				continue
			}
		}
		out = append(out, cascade.KernelRange{Context: it.ctx, Start: it.id, End: it.id,
			FirstLaunch: it.launch, LastLaunch: it.launch, Launches: 1, Representatives: reps, Warmup: warmup, Warming: warming})
	}
	return out
}

// TraceList is p as a file a user keeps to trace less next time: a
// comment saying what it is and how to use it, then one line per range
// of Ranges setting the tracer's variables for one run of the program:
//
//	DYNAMIC_KERNEL_LIMIT_START=101 DYNAMIC_KERNEL_LIMIT_END=103 TERMINATE_UPON_LIMIT=1
//
// each after a comment naming the range's context and launches.
func TraceList(p Plan) string { return TraceListWarmed(p, Ranges(p), "", true) }

// TraceListWarmed is TraceList of ranges (RangesWarmed's), whose
// launches of warming are those of the L2 named by l2 ("a config (L2 n
// KB)"); windows false says they were left out on purpose.
func TraceListWarmed(p Plan, ranges []cascade.KernelRange, l2 string, windows bool) string {
	launches, warming := 0, 0
	for _, r := range ranges {
		launches += r.Launches
		warming += r.Warming
	}
	var b strings.Builder
	of := ""
	if p.TraceID != "" {
		of = " of trace " + p.TraceID
	}
	id := p.ID
	if id == "" {
		id = "(unsaved)"
	}
	fmt.Fprintf(&b, "# Cascade sampling plan %s%s: %s, error bound %.3g %% at 95 %% confidence, warm-up %d.\n",
		id, of, p.Method, 100*p.ErrorBound, p.Warmup)
	fmt.Fprintf(&b, "# %d representatives and %d warm-up launches of %d to trace (%.4g %% of the warp instructions), in %d ranges.\n",
		p.Samples, launches-p.Samples-warming, p.Launches, 100*p.SimulatedFraction, len(ranges))
	switch {
	case warming > 0:
		fmt.Fprintf(&b, "# And %d launches the L2 warming before a segment reads, never simulated, for L2s up to %s's:\n"+
			"# traced too, a sampled run warms each segment's L2 as on the whole trace.\n", warming, l2)
	case !windows:
		b.WriteString("# Without the launches the L2 warming before a segment reads (asked with warming: false): a sampled\n" +
			"# run of this trace warms its segments from the traced launches only (\"L2 warmed in part\"), and\n" +
			"# states the wider interval of segments not warmed.\n")
	}
	b.WriteString(`#
# Each line below is one run of the program under the Accel-Sim NVBit tracer
# (LD_PRELOAD=.../tracer_tool.so): the tracer reads these variables once, at
# start, and traces kernel ids START to END, both inclusive (ids count from 1,
# per CUDA context in 2025+ tracers); TERMINATE_UPON_LIMIT=1 ends the program
# after END. MemcpyHtoD lines are written whatever the range. For example:
#   grep -v '^#' this-file | while read -r vars; do
#     env $vars LD_PRELOAD=$TRACER ./program
#     set -- $vars; r=${1#*=}-${2#*=}
#     for l in traces/kernelslist*; do case $l in *-*|*.g) ;; *) mv "$l" "$l-$r";; esac; done
#   done
# Each run writes its own kernel list: keep each, named with its range
# (kernelslist_ctx_0x…-START-END, kernelslist-START-END); Cascade merges
# them. Then upload one trace holding those kernel traces and lists, every
# launch's stats (the stats files of the full trace: an untraced launch
# counts no instructions) and the measured timing of every launch
# (real_timing.json). It is ready with every launch, the untraced ones
# marked (Kernel.traced), and simulates sampled with this plan, planned
# again on it with the same method, target and warm-up.
`)
	for _, r := range ranges {
		ctx := ""
		if r.Context != nil {
			ctx = "context " + *r.Context + ", "
		}
		warming := ""
		if r.Warming > 0 {
			warming = fmt.Sprintf(", %d for L2 warming", r.Warming)
		}
		fmt.Fprintf(&b, "# %slaunches %d-%d: %d representative(s), %d warm-up%s\n",
			ctx, r.FirstLaunch, r.LastLaunch, r.Representatives, r.Launches-r.Representatives-r.Warming, warming)
		fmt.Fprintf(&b, "DYNAMIC_KERNEL_LIMIT_START=%d DYNAMIC_KERNEL_LIMIT_END=%d TERMINATE_UPON_LIMIT=1\n", r.Start, r.End)
	}
	return b.String()
}
