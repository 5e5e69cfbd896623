package db_test

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simlog/simlogtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// BenchmarkParseStore1M reads a 1,000,000-kernel log generated in the
// real log's format (compact: the lines Cascade reads, as
// BenchmarkStats1M) with the run log parser and stores its kernels as a
// run's progress updates do: about every 10,000 finished kernels, the
// results final since the last update (Take) appended, and the rest
// (TakeAll) at the end. It reports the whole time (s-total), the part
// spent storing (s-store) and taking (s-list), the peak heap (MB-heap,
// sampled after each update), and, beside them, the days the simulator would take to print
// such a log at vecAdd's pace (sim-days).
//
//	go test ./db -run '^$' -bench ParseStore1M -benchtime 1x -timeout 60m -v
func BenchmarkParseStore1M(b *testing.B) {
	const total, step = 1_000_000, 10_000
	path := b.TempDir() + "/accel-sim.log"
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	simlogtest.WriteLog(f, simlogtest.RealBlock(b), total, true)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			var peak uint64
			var store, list time.Duration
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				p := simlog.NewParser(total).ReadStats(simstats.Builtin())
				saved, next := 0, step
				save := func(take func() []cascade.RunKernel) {
					t0 := time.Now()
					ks := take()
					list += time.Since(t0)
					t0 = time.Now()
					if err := d.AppendRunKernels(ctx, "big", saved, ks); err != nil {
						b.Fatal(err)
					}
					store += time.Since(t0)
					saved += len(ks)
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				lines := 0
				for sc.Scan() {
					p.Line(sc.Text())
					if lines++; lines%(1<<18) == 0 && p.Progress().Done >= next { // Progress counts them all
						save(p.Take)
						next = saved + step
					}
				}
				f.Close()
				if o := p.Outcome(simlog.Exit{}); !o.Succeeded {
					b.Fatal(o.Reason)
				}
				save(p.TakeAll)
				if saved != total {
					b.Fatalf("%d kernels stored", saved)
				}
			}
			el := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(el.Seconds(), "s-total")
			b.ReportMetric(store.Seconds()/float64(b.N), "s-store")
			b.ReportMetric(list.Seconds()/float64(b.N), "s-list")
			b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
			b.ReportMetric(21*float64(total)/86400, "sim-days")
		})
	}
}
