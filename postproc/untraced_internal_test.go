package postproc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestUntracedLaunches: a trace whose kernelslist.g names the kernel
// traces of some launches only (the tracer run on DYNAMIC_KERNEL_LIMIT
// ranges) is ready with every launch of its stats, those without a kernel
// trace marked untraced, and counts its launches: in a batch (small
// stats) and on its own (big ones). A kernelslist.g naming a trace that
// is no kernel-N file says nothing of which launches it traced: none is
// marked.
func TestUntracedLaunches(t *testing.T) {
	r := newRig(t)
	small := map[string]string{
		"traces/stats_ctx_0x1": statsHeader + statsRow(1) + statsRow(2) + statsRow(3) + statsRow(4),
		"traces/kernelslist.g": "MemcpyHtoD,0x0000000000001000,64\nkernel-2-ctx_0x1.traceg\nMemcpyHtoD,0x0000000000001000,64\nkernel-3-ctx_0x1.traceg\n",
	}
	r.trace("small", cascade.TraceProcessing, small)
	const bigN = 25_000
	var stats, list strings.Builder
	stats.WriteString(statsHeader)
	for i := 1; i <= bigN; i++ {
		stats.WriteString(statsRow(i))
		if i%10 == 0 {
			fmt.Fprintf(&list, "kernel-%d-ctx_0x1.traceg\n", i)
		}
	}
	r.trace("big", cascade.TraceProcessing, map[string]string{"traces/stats_ctx_0x1": stats.String(), "traces/kernelslist.g": list.String()})
	odd := map[string]string{
		"traces/stats_ctx_0x1": small["traces/stats_ctx_0x1"],
		"traces/kernelslist.g": "kernel_two.traceg\n",
	}
	r.trace("odd", cascade.TraceProcessing, odd)

	r.run(r.processor(2))
	moved, _ := r.mv.waitMoved(3)
	if want := []string{"big READY ran=false", "odd READY ran=false", "small READY ran=false"}; !reflect.DeepEqual(moved, want) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
	untraced := func(id string) []int {
		var ids []int
		for _, k := range r.m.Kernels(id) {
			if k.Untraced {
				ids = append(ids, k.KernelID)
			}
		}
		return ids
	}
	if tr := r.stored("small"); tr.KernelCount != 2 || len(r.m.Kernels("small")) != 4 || tr.UntracedKernels != 2 || !reflect.DeepEqual(untraced("small"), []int{1, 4}) {
		t.Errorf("small: kernelCount %d (the kernel lines of kernelslist.g: want 2), %d listed, %d untraced %v", tr.KernelCount, len(r.m.Kernels("small")), tr.UntracedKernels, untraced("small"))
	}
	if tr := r.stored("big"); tr.KernelCount != bigN/10 || len(r.m.Kernels("big")) != bigN || tr.UntracedKernels != bigN-bigN/10 || len(untraced("big")) != bigN-bigN/10 || r.m.Kernels("big")[9].Untraced {
		t.Errorf("big: %d kernels, %d untraced", tr.KernelCount, tr.UntracedKernels)
	}
	if tr := r.stored("odd"); tr.KernelCount != 1 || len(r.m.Kernels("odd")) != 4 || tr.UntracedKernels != 0 || len(untraced("odd")) != 0 {
		t.Errorf("odd: %d kernels, %d untraced", tr.KernelCount, tr.UntracedKernels)
	}
}
