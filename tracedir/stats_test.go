package tracedir_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"

// readStatsOf writes files (path under dir → content) and reads the
// trace's kernels as the post-processor does.
func readStatsOf(t *testing.T, files map[string]string) ([]cascade.Kernel, []string, error) {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), []byte(s))
	}
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	var w tracedir.Warnings
	ks, err := tree.ReadKernels(&w)
	return ks, w.Result(), err
}

// TestStatsCtxWin: a trace with stats_ctx_* files has their rows as its
// kernels, as the Traces guide says ("The rows of traces/stats_ctx_*, or
// stats.csv from older tracers"); a stats.csv left beside them is
// ignored, with a warning saying so.
func TestStatsCtxWin(t *testing.T) {
	ks, warnings, err := readStatsOf(t, map[string]string{
		"traces/stats_ctx_0x1": statsHeader + "1, _Z1fv, 1,1,1, 1, 32,1,1, 32, 10, 10\n",
		"traces/stats_ctx_0x2": statsHeader + "1, _Z1gv, 1,1,1, 1, 32,1,1, 32, 10, 10\n",
		"traces/stats.csv":     statsHeader + "1, _Z1hv, 1,1,1, 1, 32,1,1, 32, 10, 10\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 {
		t.Fatalf("%d kernels, want the 2 of the stats_ctx_ files: %+v", len(ks), ks)
	}
	for _, k := range ks {
		if k.Context == nil {
			t.Errorf("kernel %s has no context: stats.csv's row was read", k.Name)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "traces/stats.csv") || !strings.Contains(warnings[0], "ignored") || !strings.Contains(warnings[0], "stats_ctx_") {
		t.Errorf("warnings %q, want one saying traces/stats.csv is ignored for the stats_ctx_ files", warnings)
	}

	// An older tracer's trace: stats.csv alone is read.
	ks, warnings, err = readStatsOf(t, map[string]string{"traces/stats.csv": statsHeader + "1, _Z1hv, 1,1,1, 1, 32,1,1, 32, 10, 10\n"})
	if err != nil || len(ks) != 1 || len(warnings) != 0 {
		t.Errorf("stats.csv alone: %d kernels, warnings %q, err %v; want 1, none, nil", len(ks), warnings, err)
	}
}

// TestStatsRowOddities: a total_reported_insts that is no count is a
// warning naming the file, line and column, and the kernel is kept (only
// the cut-short check reads it); a line too long for any stats row is a
// warning naming the file, line and limit, and is skipped, the rows
// after it read.
func TestStatsRowOddities(t *testing.T) {
	ks, warnings, err := readStatsOf(t, map[string]string{
		"traces/stats_ctx_0x1": statsHeader + "1, _Z1fv, 1,1,1, 1, 32,1,1, 32, 10, x\n",
	})
	if err != nil || len(ks) != 1 {
		t.Fatalf("%d kernels, err %v; want the row kept", len(ks), err)
	}
	want := `traces/stats_ctx_0x1:2: total_reported_insts: "x" is not a 32-bit count; the kernel is kept, but its trace is not checked for being cut short`
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", warnings, want)
	}

	long := "2, _Z" + strings.Repeat("a", 17<<20) + "v, 1,1,1, 1, 32,1,1, 32, 10, 10\n"
	ks, warnings, err = readStatsOf(t, map[string]string{
		"traces/stats.csv": statsHeader + "1, _Z1fv, 1,1,1, 1, 32,1,1, 32, 10, 10\n" + long + "3, _Z1gv, 1,1,1, 1, 32,1,1, 32, 10, 10",
	})
	if err != nil {
		t.Fatalf("err %v, want none: a warning", err)
	}
	if len(ks) != 2 || ks[0].KernelID != 1 || ks[1].KernelID != 3 {
		t.Errorf("kernels %+v, want 1 and 3", ks)
	}
	want = "traces/stats.csv:3: the line is over 16 MiB, longer than any stats row; skipped"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", warnings, want)
	}
}

// TestStatsForkColumns: stats files of tracer forks, with columns besides
// the tracer's twelve (a trailing latency; device_id and stream_id
// first), are read by the header's names, the other columns ignored in
// one warning naming the file, line 1 and them; a header that lacks some
// of the twelve is refused naming the file, line 1 and those it lacks,
// and a file none of whose rows is a kernel says so first.
func TestStatsForkColumns(t *testing.T) {
	latencyHeader := strings.TrimSuffix(statsHeader, "\n") + ", latency\n"
	latency := latencyHeader +
		"kernel-1.trace, _Z1fv, 2, 1, 1, 2, 32, 1, 1, 64, 10,10, 1234\n" +
		"kernel-2.trace, _Z1gv, 3, 1, 1, 3, 64, 1, 1, 192, 20,20, 99\n"
	ks, warnings, err := readStatsOf(t, map[string]string{"traces/stats.csv": latency})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].Name != "_Z1fv" || ks[0].GridX != 2 || *ks[0].Instructions != 10 || ks[1].KernelID != 2 || ks[1].BlockX != 64 {
		t.Errorf("latency fork: kernels %+v, want _Z1fv and _Z1gv", ks)
	}
	want := `traces/stats.csv:1: the header names column "latency" besides the tracer's: ignored`
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("latency fork: warnings %q, want [%q]", warnings, want)
	}

	devices := "device_id, stream_id, " + statsHeader +
		"0, 7, kernel-1-ctx_0x1.trace.xz, _Z1fv, 2, 1, 1, 2, 32, 1, 1, 64, 10,10\n"
	ks, warnings, err = readStatsOf(t, map[string]string{"traces/stats_ctx_0x1": devices})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].TraceFile != "kernel-1-ctx_0x1.trace.xz" || ks[0].KernelID != 1 || ks[0].Name != "_Z1fv" || ks[0].BlockX != 32 {
		t.Errorf("device_id fork: kernels %+v, want kernel 1, _Z1fv", ks)
	}
	want = `traces/stats_ctx_0x1:1: the header names columns "device_id", "stream_id" besides the tracer's: ignored`
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("device_id fork: warnings %q, want [%q]", warnings, want)
	}

	lacking := strings.Replace(statsHeader, "grid_dimY, ", "", 1) + "kernel-1.trace, _Z1fv, 2, 1, 2, 32, 1, 1, 64, 10,10\n"
	ks, warnings, err = readStatsOf(t, map[string]string{"traces/stats.csv": lacking})
	if err != nil || len(ks) != 0 {
		t.Fatalf("lacking grid_dimY: %d kernels, err %v; want none, no error", len(ks), err)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "traces/stats.csv: none of its rows is a kernel") ||
		!strings.HasPrefix(warnings[1], `traces/stats.csv:1: the header lacks the tracer's column "grid_dimY"`) {
		t.Errorf("lacking grid_dimY: warnings %q, want the file refused first, then line 1 naming grid_dimY", warnings)
	}

	// Rows wider than the header: each refused; the file's refusal comes
	// first, naming its first reason.
	wide := latencyHeader + "kernel-1.trace, _Z1fv, 2, 1, 1, 2, 32, 1, 1, 64, 10,10, 1, 2\nkernel-2.trace, _Z1fv, 2, 1, 1, 2, 32, 1, 1, 64, 10,10, 1, 2\n"
	ks, warnings, _ = readStatsOf(t, map[string]string{"traces/stats.csv": wide})
	want = "traces/stats.csv: none of its rows is a kernel: 2 refused, the first on line 2: want 13 columns, as the header (line 1) names, got 14"
	if len(ks) != 0 || len(warnings) != 4 || warnings[0] != want {
		t.Errorf("rows wider than the header: %d kernels, warnings %q; want none, first %q", len(ks), warnings, want)
	}
}
