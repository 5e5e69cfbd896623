package results

import (
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestSampledKernelsCSVColumns: a sampled run's kernels CSV has the
// columns its page shows (simulated, projected from, the full run's
// cycles and the error against them); another run's has none of them.
func TestSampledKernelsCSVColumns(t *testing.T) {
	counters := []cascade.StatCounter{{Name: "ipc", Kind: "kernel", Unit: "insts/cycle"}}
	full := KernelsCSVHeader(cascade.Run{StatCounters: counters})
	sampled := KernelsCSVHeader(cascade.Run{StatCounters: counters, Sampling: &cascade.SampledRun{}})
	if slices.Contains(full, "simulated") {
		t.Errorf("a full run's header %v has the sampled columns", full)
	}
	want := append(slices.Clone(kernelsCSVColumns), "simulated", "projected_from", "full_cycles", "full_error_pct", "stat_ipc")
	if !slices.Equal(sampled[:len(want)], want) {
		t.Fatalf("sampled header %v, want %v…", sampled, want)
	}
	yes, no, from, fc, fe := true, false, 3, int64(900), 11.1
	stats := make([]float64, len(full)-len(kernelsCSVColumns)) // ipc, then the derived hit rates
	stats[0] = 2
	rep := kernelCSVRow(nil, cascade.RunKernel{SimCycles: 1000, Simulated: &yes, FullCycles: &fc, FullErrorPct: &fe}, true, stats)
	proj := kernelCSVRow(nil, cascade.RunKernel{SimCycles: 1000, Simulated: &no, ProjectedFrom: &from}, true, stats)
	at := func(row []string, col string) string { return row[slices.Index(sampled, col)] }
	if at(rep, "simulated") != "true" || at(rep, "projected_from") != "" || at(rep, "full_cycles") != "900" || at(rep, "full_error_pct") != "11.1" {
		t.Errorf("representative's row %v", rep)
	}
	if at(proj, "simulated") != "false" || at(proj, "projected_from") != "3" || at(proj, "full_cycles") != "" || at(proj, "stat_ipc") != "2" {
		t.Errorf("projected launch's row %v", proj)
	}
	if len(rep) != len(sampled) || len(kernelCSVRow(nil, cascade.RunKernel{}, false, stats)) != len(full) {
		t.Error("rows and headers differ in length")
	}
}
