package results

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestKernelErrors: a sampled run's kernels are matched with the full
// run's by launch and kernel id.
func TestKernelErrors(t *testing.T) {
	id := func(n int) *int { return &n }
	sampled := []cascade.RunKernel{{Seq: 0, KernelID: id(1), SimCycles: 110}, {Seq: 1, KernelID: id(2), SimCycles: 50}, {Seq: 2, KernelID: id(3), SimCycles: 7}}
	full := []cascade.RunKernel{{Seq: 0, KernelID: id(1), SimCycles: 100}, {Seq: 1, KernelID: id(2), SimCycles: 0}, {Seq: 2, KernelID: id(9), SimCycles: 7}}
	errs := kernelErrors(sampled, full)
	if len(errs) != 1 || math.Abs(errs[0]-10) > 1e-12 {
		t.Errorf("errors %v, want [10]", errs)
	}
	if sampled[0].FullCycles == nil || *sampled[0].FullCycles != 100 || sampled[0].FullErrorPct == nil ||
		sampled[1].FullCycles == nil || *sampled[1].FullCycles != 0 || sampled[1].FullErrorPct != nil || sampled[2].FullCycles != nil {
		t.Errorf("kernels %+v", sampled)
	}
}
