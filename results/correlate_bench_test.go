package results_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// BenchmarkCorrelation100k correlates a run of 100,000 kernels, each
// with every built-in statistic, with a trace whose profiles measured
// four of them for every kernel (400,000 counters), on SQLite: a fresh
// Reader each time (nothing cached), reporting the time a run and the
// peak heap in use while correlating (sampled every 5 ms), which holds
// the trace's kernel index and one page of kernels and counters, never
// the pairs.
func BenchmarkCorrelation100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	d := dbtest.DB(b)
	stats := []string{"cycles", "warp_instructions", "dram_reads", "l2_read_hits"}
	tab := simstats.Builtin()
	ks := make([]cascade.Kernel, n)
	var cs []cascade.KernelCounter
	rks := make([]cascade.RunKernel, n)
	var counters []cascade.StatCounter
	for _, c := range tab.Counters {
		counters = append(counters, cascade.StatCounter{Name: c.Name, Kind: string(c.Kind), Unit: c.Unit})
	}
	v := make(simstats.Values, len(tab.Counters))
	for i := range n {
		ks[i] = cascade.Kernel{Seq: i, KernelID: i + 1, Name: fmt.Sprintf("k%d", i%17), TraceFile: "kernel.traceg"}
		for j, s := range stats {
			m := float64(1000 + (i*7+j*13)%500)
			cs = append(cs, cascade.KernelCounter{Seq: i, Stat: s, Mean: m, Min: m, Max: m, Count: 1})
		}
		for j := range v {
			v[j] = float64(900 + (i*11+j)%700)
		}
		rks[i] = cascade.RunKernel{Seq: i, KernelID: cascade.Ptr(i + 1), Name: ks[i].Name, TraceFile: "kernel.traceg",
			SimCycles: int64(v[tab.Index("cycles")]), Stats: simstats.Encode(nil, v)}
	}
	tr := cascade.Trace{ID: "t1", State: cascade.TraceReady, Prompts: []string{}, Warnings: []string{}, KernelCount: n,
		Profiles: []cascade.ProfileRead{{File: "ncu.csv", Launches: n, Matched: n, Stats: stats}}}
	if err := d.SaveTrace(ctx, &tr); err != nil {
		b.Fatal(err)
	}
	if err := d.ReplaceKernels(ctx, "t1", ks); err != nil {
		b.Fatal(err)
	}
	if err := d.ReplaceKernelCounters(ctx, "t1", cs); err != nil {
		b.Fatal(err)
	}
	r := cascade.Run{ID: "r1", TraceID: "t1", SimConfig: "SM7_QV100", State: cascade.RunQueued, Executor: "local", History: []string{}, StatCounters: counters}
	if err := d.CreateRun(ctx, &r); err != nil {
		b.Fatal(err)
	}
	if err := d.SaveRunKernels(ctx, "r1", rks); err != nil {
		b.Fatal(err)
	}
	r, err := d.Run(ctx, "r1")
	if err != nil {
		b.Fatal(err)
	}
	cs, ks, rks = nil, nil, nil
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	b.ResetTimer()
	for range b.N {
		c, err := results.NewCorrelator(results.New(results.Config{Store: d})).Correlation(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Stats) != len(stats) || c.Stats[0].Kernels != n {
			b.Fatalf("%d statistics, %d kernels", len(c.Stats), c.Stats[0].Kernels)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/(1<<20), "peak-heap-over-idle-MiB")
}
