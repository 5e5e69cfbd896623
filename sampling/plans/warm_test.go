package plans_test

import (
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// footprints are the kernels' footprints, read once for every segment.
var footprints = l2warm.NewCache("")

// warmSegment gives the segment in dir (its kernel list sub, of the
// kernels refs of list, its config's files copied in) the warming kernel
// the server gives a segment (CASCADE_BENCH_WARMING=1; runs/warm.go,
// docs/sampling.md "Warming L2 before a segment"): the lines its kernels
// share with the launches shortly before it, loaded into L2 first, but
// for those its first warmup kernels touch, which bring them in.
// share is the window's share of the L2 (simRunner.warmShare).
func warmSegment(list *kernellist.List, dir string, sub *kernellist.List, refs []kernellist.Ref, warmup int, share float64) (*kernellist.List, error) {
	cfg := simconfig.LoadOne(dir)
	l2, err := l2warm.L2(cfg)
	if err != nil || l2.Flushed {
		return sub, err
	}
	window := l2.Window(share)
	plan, err := l2warm.PlanAfterWarmup(footprints, list, refs, warmup, window)
	if err != nil || len(plan.Lines) == 0 {
		return sub, err
	}
	name, err := l2warm.WriteKernel(dir, plan, sub.TracePath(sub.Kernels()[0]))
	if err != nil {
		return sub, err
	}
	return kernellist.PutFirst(sub, name)
}
