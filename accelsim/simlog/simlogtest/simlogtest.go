// Package simlogtest generates simulator logs in the real log's format
// for tests and benchmarks: as many kernels as asked, each one the first
// kernel of a real Accel-Sim log with its uids, file names and aggregate
// counters counting up.
package simlogtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// RealBlock is the first kernel's part of a real log (SM7_QV100, vecAdd),
// from "Processing kernel" to the line before the next one: 3,142 lines,
// of which Cascade reads about 60.
func RealBlock(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(testdata(), "vecadd-x2-SM7_QV100.log"))
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

// WriteLog writes a log of n kernels in the real log's format: each
// kernel's block is the real one, or, compact, only the lines Cascade
// reads (its counters, the launch and the kernel_name block's first
// lines), with every aggregate counter grown by its first kernel's value
// and the uids and file names counting up.
func WriteLog(w io.Writer, block []string, n int, compact bool) {
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

// testdata is accelsim/simstats/testdata, found from this file's place
// in the source tree, so any package's test can read it.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "simstats", "testdata")
}
