package sampling_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cascade-sim/cascade/sampling"
)

// BenchmarkPlan1M plans a 1,000,000-launch trace made as an LLM's prefill
// and decode steps launch kernels (40 kernel names, 2 to 5 grids each,
// lognormal durations per name and grid), with each method at its
// defaults. Besides the time it reports MB-input, the live heap the
// input takes, MB-alloc, what one planning allocates, and MB-peak, their
// sum: a bound on the heap's peak while planning (the garbage collector
// can only lower it), which is to stay under 256 MB.
func BenchmarkPlan1M(b *testing.B) {
	for _, bc := range []struct {
		name   string
		method sampling.Method
		timed  bool
	}{
		{"stem", sampling.STEM{}, true},
		{"sieve", sampling.Sieve{}, false},
		{"stem-step", sampling.STEM{Warmup: sampling.WarmupStep}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			in := llmTrace(rand.New(rand.NewPCG(7, 11)), 1_000_000, 40, bc.timed)
			var withInput runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&withInput)
			b.ResetTimer()
			var plan sampling.Plan
			var alloc uint64
			for b.Loop() {
				var m0, m1 runtime.MemStats
				b.StopTimer()
				plan = sampling.Plan{}
				runtime.GC()
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				var err error
				plan, err = bc.method.Plan(in, sampling.Target{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.ReadMemStats(&m1)
				alloc = max(alloc, m1.TotalAlloc-m0.TotalAlloc)
				b.StartTimer()
			}
			const mb = 1 << 20
			input := float64(withInput.HeapAlloc-before.HeapAlloc) / mb
			b.ReportMetric(input, "MB-input")
			b.ReportMetric(float64(alloc)/mb, "MB-alloc")
			b.ReportMetric(input+float64(alloc)/mb, "MB-peak")
			b.ReportMetric(float64(plan.Samples), "samples")
			b.ReportMetric(100*plan.SimulatedFraction, "%-simulated")
			b.ReportMetric(100*plan.ExpectedError, "%-expected-error")
			runtime.KeepAlive(in)
		})
	}
}
