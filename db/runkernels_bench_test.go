package db_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// benchRunKernels returns n kernel results as the log parser gives them,
// with statistics of the builtin table: whole numbers that grow with the
// kernel for most counters, a rate or two with a fraction, and a counter
// the log did not print.
func benchRunKernels(n int) []cascade.RunKernel {
	tab := simstats.Builtin()
	ks := make([]cascade.RunKernel, n)
	v := make(simstats.Values, len(tab.Counters))
	for i := range ks {
		for c, ctr := range tab.Counters {
			switch {
			case c == len(v)-1 && i%3 == 0:
				v[c] = math.NaN()
			case ctr.Kind == simstats.Rate:
				v[c] = float64(1000+i%997) / 7
			default:
				v[c] = float64((c+1)*8823 + i%4099*(c+3))
			}
		}
		id := i + 1
		ks[i] = cascade.RunKernel{
			KernelID: &id, Context: cascade.Ptr("0x5a1e2c0"),
			Name:      fmt.Sprintf("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, %d)", i%200),
			TraceFile: fmt.Sprintf("kernel-%d.traceg", id), LaunchUID: id,
			SimCycles: int64(8823 + i%1000), SimInstructions: int64(2203168 + i%5000), IPC: float64(2203168+i%5000) / float64(8823+i%1000),
			Stats: simstats.Encode(nil, v),
		}
	}
	return ks
}

// BenchmarkRunKernels1M stores the results of a run of 1,000,000 kernels
// with their statistics (~37 counters of the builtin table) as progress
// updates do, 10,000 new kernels an update through AppendRunKernels, and
// reports the time (s-store), rows a second, the heap (MB-heap-list: the
// list alone, as the parser holds it; MB-heap-peak, sampled every 10 ms
// while storing) and the database's size (MB-db: the table with its
// index on PostgreSQL, the file on SQLite). Then it reads the page of
// 100 after row 900,000 b.N times with RunKernelPage, all columns, and
// reports the p50 and p99 (ms-p50, ms-p99; goal p99 ≤ 10 ms, as
// BenchmarkKernelsPage's).
//
//	go test ./db -run '^$' -bench RunKernels1M -benchtime 300x -timeout 60m
func BenchmarkRunKernels1M(b *testing.B) {
	const total, step, depth = 1_000_000, 10_000, 900_000
	for name, u := range dbtest.DatabaseURLs(b) {
		// Stored once, before b.Run, which runs its function again for
		// every b.N it tries.
		ctx := context.Background()
		d, err := db.Open(ctx, db.Config{URL: u, DataDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		ks := benchRunKernels(total)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		list := ms.HeapInuse

		stop, peakc := make(chan struct{}), make(chan uint64)
		go func() {
			peak := uint64(0)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				select {
				case <-stop:
					peakc <- peak
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		for from := 0; from < total; from += step {
			if err := d.AppendRunKernels(ctx, "big", from, ks[from:from+step]); err != nil {
				b.Fatal(err)
			}
		}
		el := time.Since(start)
		close(stop)
		peak := <-peakc
		size, err := d.Size(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d run kernels stored in %v (%.0f rows/s), heap %d MB with the list, peak %d MB, database %d MB",
			name, total, el.Round(time.Millisecond), total/el.Seconds(), list>>20, peak>>20, size>>20)
		runtime.KeepAlive(ks)
		ks = nil

		b.Run(name, func(b *testing.B) {
			after := cascade.Cursor(depth - 1)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				p, err := d.RunKernelPage(ctx, "big", cascade.Page{First: 100, After: after})
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Items) != 100 || p.Items[0].Seq != depth || p.Items[99].Stats == nil {
					b.Fatalf("page of %d kernels, want 100 from %d with statistics", len(p.Items), depth)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(el.Seconds(), "s-store")
			b.ReportMetric(total/el.Seconds(), "rows/s")
			b.ReportMetric(float64(list)/(1<<20), "MB-heap-list")
			b.ReportMetric(float64(peak)/(1<<20), "MB-heap-peak")
			b.ReportMetric(float64(size)/(1<<20), "MB-db")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
		})
	}
}
