package results

import (
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// BenchmarkCompare joins n kernels with one measured row each: linear in
// kernels + rows (it was kernels × rows).
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{10_000, 40_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			kernels := make([]cascade.RunKernel, n)
			rows := make([]tracedir.TimingRow, n)
			for i := range n {
				kernels[i] = simulatedKernel(i+1, "0x1", float64(1000+i))
				d := float64(900 + i)
				rows[i] = tracedir.TimingRow{KernelID: i + 1, Context: "0x1", DurationNs: &d}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, ok := Compare(kernels, rows); !ok {
					b.Fatal("nothing compared")
				}
			}
		})
	}
}

// BenchmarkProjectSteps projects 2,000 steps of 50 mapped events each
// onto as many simulated kernels.
func BenchmarkProjectSteps(b *testing.B) {
	const steps, events = 2000, 50
	var tl tracedir.Timeline
	var mapping []tracedir.EventMapping
	var kernels []cascade.RunKernel
	for s := range steps {
		st := tracedir.Step{Step: s, MeasuredNs: 1e6}
		for e := range events {
			id := s*events + e + 1
			st.Events = append(st.Events, tracedir.Event{Kind: "kernel", DurationNs: 100})
			mapping = append(mapping, tracedir.EventMapping{Step: s, Event: e, Kernel: kernellist.Ref{ID: id, Context: "0x1"}})
			kernels = append(kernels, simulatedKernel(id, "0x1", 90))
		}
		tl.Steps = append(tl.Steps, st)
	}
	b.ResetTimer()
	for b.Loop() {
		ProjectSteps(tl, mapping, kernels)
	}
}
