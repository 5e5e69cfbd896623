package simlog_test

import (
	"bufio"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simlog/simlogtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// BenchmarkStats1M parses the statistics of a 1,000,000-kernel log
// generated in the real log's format (compact: the ~60 lines a kernel
// that Cascade reads; the real log prints 1,400–3,100 lines a kernel),
// and of 10,000 kernels with the real block whole, taking the final
// results every 65,536 lines as a run's progress updates do. It reports
// the time a kernel, lines a second, the peak heap (sampled at each take
// and at the end), and, beside them, the simulator's
// own pace on vecAdd (the real log's gpgpu_simulation_rate: 420 cycles a
// second on SM7_QV100, so the 8,823-cycle kernel took 21 s to print).
func BenchmarkStats1M(b *testing.B) {
	block := simlogtest.RealBlock(b)
	for _, c := range []struct {
		name    string
		kernels int
		compact bool
	}{{"compact-1M", 1_000_000, true}, {"whole-10k", 10_000, false}} {
		b.Run(c.name, func(b *testing.B) {
			path := b.TempDir() + "/accel-sim.log"
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			simlogtest.WriteLog(f, block, c.kernels, c.compact)
			f.Close()
			fi, _ := os.Stat(path)
			b.ResetTimer()
			var lines int
			var peak uint64
			start := time.Now()
			for range b.N {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				p := simlog.NewParser(c.kernels).ReadStats(simstats.Builtin())
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				lines = 0
				n := 0
				take := func(ks []cascade.RunKernel) {
					for _, k := range ks {
						if n++; k.LaunchUID != n || k.Stats == nil {
							b.Fatalf("result %d: uid %d, %d bytes of statistics", n, k.LaunchUID, len(k.Stats))
						}
					}
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
				for sc.Scan() {
					p.Line(sc.Text())
					if lines++; lines%(1<<16) == 0 {
						take(p.Take())
					}
				}
				f.Close()
				if o := p.Outcome(simlog.Exit{}); !o.Succeeded {
					b.Fatal(o.Reason)
				}
				take(p.TakeAll())
				if n != c.kernels {
					b.Fatalf("%d kernels", n)
				}
			}
			el := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(el.Nanoseconds())/float64(c.kernels), "ns/kernel")
			b.ReportMetric(float64(lines)/el.Seconds(), "lines/s")
			b.ReportMetric(float64(fi.Size())/el.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
			b.ReportMetric(21*float64(c.kernels)/86400, "sim-days")
		})
	}
}
