package simlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// warmLog is the log of a segment of two kernels (kernel-5, kernel-6)
// that the warming kernel ran before.
func warmLog() []string {
	var lines []string
	tot, reads := 0, 0
	for uid, k := range []string{"./" + l2warm.TraceBase + ".traceg", "./kernel-5.traceg", "./kernel-6.traceg"} {
		name := "_Z1kPf"
		if uid == 0 {
			name = l2warm.KernelName
		}
		cycles := 1000 * (uid + 1)
		tot += cycles
		reads += 100 * (uid + 1) // an aggregate counter: 100, 300, 600
		lines = append(lines, "Processing kernel "+k,
			fmt.Sprintf("launching kernel name: %s uid: %d cuda_stream_id: 0", name, uid+1),
			"kernel_name = "+name, fmt.Sprintf("kernel_launch_uid = %d", uid+1),
			fmt.Sprintf("gpu_sim_cycle = %d", cycles), fmt.Sprintf("gpu_sim_insn = %d", 10*(uid+1)), "gpu_ipc = 0.0100",
			fmt.Sprintf("gpu_tot_sim_cycle = %d", tot),
			fmt.Sprintf("\tL2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS] = %d", reads))
	}
	return append(lines, "GPGPU-Sim: *** exit detected ***")
}

// TestWarmingKernelIsNoResult: the warming kernel's result is never
// given, by Take, TakeAll or Kernels, nor counted in the progress; the
// run's kernels keep their launch uids, and their statistics are their
// own (diffed from the warming kernel's aggregate counters).
func TestWarmingKernelIsNoResult(t *testing.T) {
	for _, n := range []int{1, 3, 100} {
		p, got := takeEvery(warmLog(), 2, n, true)
		if len(got) != 2 || *got[0].KernelID != 5 || *got[1].KernelID != 6 || got[0].LaunchUID != 2 || got[0].SimCycles != 2000 {
			t.Fatalf("taking every %d lines: %+v", n, got)
		}
		if pr := p.Progress(); pr.Launched != 2 || pr.Done != 2 || pr.Total != 2 {
			t.Errorf("progress %+v", pr)
		}
		if o, _ := p.Judged(); !o.Succeeded {
			t.Errorf("outcome %+v", o)
		}
		tbl := simstats.Builtin()
		v, err := simstats.Decode(got[0].Stats)
		i := tbl.Index("l2_read_accesses")
		if err != nil || i < 0 || v[i] != 200 {
			t.Errorf("kernel-5's L2 reads: %v (%v), want 200, its own", v, err)
		}
	}
	p, err := Parse(strings.NewReader(strings.Join(warmLog(), "\n")), 2)
	if err != nil || len(p.Kernels()) != 2 || p.Kernels()[0].Name != "_Z1kPf" {
		t.Errorf("Kernels: %+v, %v", p.Kernels(), err)
	}
}
