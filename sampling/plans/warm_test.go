package plans_test

import (
	"fmt"
	"os"
	"strconv"

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
// CASCADE_BENCH_WARM_SHARE sets the window as a share of the L2 other
// than l2warm.WindowShare.
func warmSegment(list *kernellist.List, dir string, sub *kernellist.List, refs []kernellist.Ref, warmup int) (*kernellist.List, error) {
	cfg := simconfig.LoadOne(dir)
	l2, err := l2warm.L2(cfg)
	if err != nil || l2.Flushed {
		return sub, err
	}
	window := l2.Window()
	if v := os.Getenv("CASCADE_BENCH_WARM_SHARE"); v != "" {
		share, err := strconv.ParseFloat(v, 64)
		if err != nil || share <= 0 {
			return nil, fmt.Errorf("CASCADE_BENCH_WARM_SHARE=%q: want a positive share of the L2", v)
		}
		window = uint64(float64(l2.Bytes) * share)
	}
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
