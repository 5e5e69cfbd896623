package simlog_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// realBlock is the first kernel's part of a real log (SM7_QV100, vecAdd),
// from "Processing kernel" to the line before the next one: 3,142 lines,
// of which Cascade reads about 60.
func realBlock(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile("../simstats/testdata/vecadd-x2-SM7_QV100.log")
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start, end := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, "Processing kernel ") {
			if start < 0 {
				start = i
			} else {
				end = i
				break
			}
		}
	}
	return lines[start:end]
}

// writeLog writes a log of n kernels in the real log's format: each
// kernel's block is the real one, or, compact, only the lines Cascade
// reads (its counters, the launch and the kernel_name block's first
// lines), with every aggregate counter grown by its first kernel's value
// and the uids and file names counting up.
func writeLog(w io.Writer, block []string, n int, compact bool) {
	bw := bufio.NewWriterSize(w, 1<<20)
	tab := simstats.Builtin()
	keep := make([]bool, len(block))
	for i, l := range block {
		t := strings.TrimLeft(l, " \t")
		keep[i] = !compact || strings.HasPrefix(l, "Processing kernel") || strings.HasPrefix(l, "launching kernel") ||
			strings.HasPrefix(l, "kernel_") || strings.HasPrefix(l, "gpu_sim_") || strings.HasPrefix(l, "gpu_ipc")
		for _, c := range tab.Counters {
			if c.Pattern.MatchString(l) || c.Pattern.MatchString(t) {
				keep[i] = true
			}
		}
	}
	for k := 1; k <= n; k++ {
		for i, l := range block {
			if !keep[i] {
				continue
			}
			switch {
			case strings.HasPrefix(l, "Processing kernel "):
				fmt.Fprintf(bw, "Processing kernel ./traces/kernel-%d.traceg\n", k)
			case strings.HasPrefix(l, "launching kernel name: "):
				fmt.Fprintf(bw, "launching kernel name: _Z6vecAddPdS_S_i uid: %d cuda_stream_id: 0\n", k)
			case strings.HasPrefix(l, "kernel_launch_uid = "):
				fmt.Fprintf(bw, "kernel_launch_uid = %d \n", k)
			case strings.HasPrefix(l, "gpu_tot_sim_cycle = "):
				fmt.Fprintf(bw, "gpu_tot_sim_cycle = %d\n", 8823*k)
			case strings.HasPrefix(l, "gpu_tot_sim_insn = "):
				fmt.Fprintf(bw, "gpu_tot_sim_insn = %d\n", 2203168*k)
			case strings.HasPrefix(l, "gpgpu_n_tot_w_icount = "):
				fmt.Fprintf(bw, "gpgpu_n_tot_w_icount = %d\n", 71974*k)
			default:
				bw.WriteString(l)
				bw.WriteByte('\n')
			}
		}
	}
	bw.WriteString("GPGPU-Sim: *** exit detected ***\n")
	bw.Flush()
}

// BenchmarkStats1M parses the statistics of a 1,000,000-kernel log
// generated in the real log's format (compact: the ~60 lines a kernel
// that Cascade reads; the real log prints 1,400–3,100 lines a kernel),
// and of 10,000 kernels with the real block whole. It reports the time a
// kernel, lines a second, the peak heap, and, beside them, the simulator's
// own pace on vecAdd (the real log's gpgpu_simulation_rate: 420 cycles a
// second on SM7_QV100, so the 8,823-cycle kernel took 21 s to print).
func BenchmarkStats1M(b *testing.B) {
	block := realBlock(b)
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
			writeLog(f, block, c.kernels, c.compact)
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
				for sc.Scan() {
					p.Line(sc.Text())
					lines++
				}
				f.Close()
				if o := p.Outcome(simlog.Exit{}); !o.Succeeded {
					b.Fatal(o.Reason)
				}
				ks := p.Kernels()
				if len(ks) != c.kernels || ks[len(ks)-1].Stats == nil {
					b.Fatalf("%d kernels", len(ks))
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				runtime.KeepAlive(ks)
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
