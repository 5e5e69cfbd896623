package posttraces

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracedir"
)

const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"

// cutLines drops the last n lines of the file at path, as an upload that
// stopped at a line boundary leaves it.
func cutLines(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		b = b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1]
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runWarnings post-processes dir and returns its warnings.
func runWarnings(t *testing.T, dir string) []string {
	t.Helper()
	var w tracedir.Warnings
	if err := Run(context.Background(), dir, Options{Jobs: 2, XZ: "-", WorkDir: t.TempDir(), Warnings: &w}); err != nil {
		t.Fatal(err)
	}
	return w.Result()
}

// expectWarnings post-processes dir and checks its warnings are want.
func expectWarnings(t *testing.T, dir string, want []string) {
	t.Helper()
	if got := runWarnings(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// TestCutTraceWarns: a kernel trace with fewer instruction lines than its
// stats row's total_reported_insts (cut at a line boundary) is processed
// and warned of, naming the file and both counts; one with as many or
// more lines, or without a readable stats row, is not.
func TestCutTraceWarns(t *testing.T) {
	const row = "kernel-1.trace, _Z4testPf, 2, 2, 1, 4, 70, 1, 1, 70, 14,"
	cases := []struct {
		name  string
		cut   int
		stats string // "" for no stats.csv
		want  []string
	}{
		{name: "whole", stats: statsHeader + row + "14\n"},
		{name: "cut", cut: 3, stats: statsHeader + row + "14\n",
			want: []string{"kernel-1.trace: 11 instruction lines, stats.csv's total_reported_insts says 14: the file may be cut short; upload it again"}},
		{name: "more lines than reported", stats: statsHeader + row + "10\n"},
		{name: "count past 2^31", stats: statsHeader + row + "-1794967296\n",
			want: []string{"kernel-1.trace: 14 instruction lines, stats.csv's total_reported_insts says 2,500,000,000: the file may be cut short; upload it again"}},
		{name: "no stats", cut: 3},
		{name: "no row", cut: 3, stats: statsHeader + "kernel-2.trace, _Z4testPf, 2, 2, 1, 4, 70, 1, 1, 70, 14,14\n"},
		{name: "row unreadable", cut: 3, stats: statsHeader + row + "many\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/golden/classic/in")
			cutLines(t, filepath.Join(dir, "kernel-1.trace"), tc.cut)
			if tc.stats != "" {
				writeFile(t, dir, "stats.csv", tc.stats)
			}
			expectWarnings(t, dir, tc.want)
		})
	}
}

// TestCutContextTraceWarns: per-context names, compressed or not, are
// checked against their context's stats file, in the lists' order.
func TestCutContextTraceWarns(t *testing.T) {
	dir := copyDir(t, "testdata/golden/contexts/in")
	writeFile(t, dir, "stats_ctx_0x20", statsHeader+"kernel-1-ctx_0x20.trace, _Z1kv, 1, 1, 1, 1, 32, 1, 1, 32, 5,5\n")
	writeFile(t, dir, "stats_ctx_0x3", statsHeader+"kernel-1-ctx_0x3.trace.xz, _Z1kv, 1, 1, 1, 1, 32, 1, 1, 32, 1,1\n")
	want := []string{"kernel-1-ctx_0x20.trace: 2 instruction lines, stats_ctx_0x20's total_reported_insts says 5: the file may be cut short; upload it again"}
	expectWarnings(t, dir, want)
	writeFile(t, dir, "stats_ctx_0x3", statsHeader+"kernel-1-ctx_0x3.trace.xz, _Z1kv, 1, 1, 1, 1, 32, 1, 1, 32, 2,2\n")
	want = append([]string{"kernel-1-ctx_0x3.trace.xz: 1 instruction line, stats_ctx_0x3's total_reported_insts says 2: the file may be cut short; upload it again"}, want...)
	expectWarnings(t, dir, want)
}

// TestCutRealTraceWarns: the real vecadd trace (71,974 instruction lines,
// as its stats.csv says) cut by 1,000 lines is warned of; whole, or with
// fewer lines reported than it has, it is not.
func TestCutRealTraceWarns(t *testing.T) {
	src := filepath.Join(testkit.RealTrace(t, "vecadd-sm61"), "traces")
	stats, err := os.ReadFile(filepath.Join(src, "stats.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(bytes.TrimSpace(stats), []byte(", 71974,71974")) {
		t.Fatalf("stats.csv: %s, want total_insts = total_reported_insts = 71974", stats)
	}
	for _, tc := range []struct {
		name     string
		cut      int
		reported string
		row      string // name and grid columns instead of the real ones
		want     []string
	}{
		{name: "whole"},
		{name: "cut", cut: 1000,
			want: []string{"kernel-1.trace: 70,974 instruction lines, stats.csv's total_reported_insts says 71,974: the file may be cut short; upload it again"}},
		{name: "more lines than reported", reported: "70000"},
		{name: "stats row of another kernel", row: "_Z6vecSubPdS_S_i, 49, 2, 1",
			want: []string{"kernel-1.trace: stats.csv says _Z6vecSubPdS_S_i grid (49,2,1), the trace's header says _Z6vecAddPdS_S_i grid (98,1,1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			cutLines(t, filepath.Join(dir, "kernel-1.trace"), tc.cut)
			s := stats
			if tc.reported != "" {
				s = bytes.Replace(s, []byte(",71974"), []byte(","+tc.reported), 1)
			}
			if tc.row != "" {
				s = bytes.Replace(s, []byte("_Z6vecAddPdS_S_i, 98, 1, 1"), []byte(tc.row), 1)
			}
			if tc.reported != "" || tc.row != "" {
				writeFile(t, dir, "stats.csv", string(s))
			}
			expectWarnings(t, dir, tc.want)
		})
	}
}

// TestStatsContradictHeaderWarns: a stats row whose kernel name or grid
// differs from its kernel trace's header (-kernel name, -grid dim) is
// warned of, naming the trace, the stats file and both sides, and the
// trace is processed; beside a cut-short warning, after it, and with a
// total_reported_insts that does not read. A header without a name is
// compared on its grid; a row whose grid does not read is not compared on
// it (the kernel list reports the row).
func TestStatsContradictHeaderWarns(t *testing.T) {
	const tail = ", 4, 70, 1, 1, 70, 14,14\n"
	cases := []struct {
		name   string
		row    string // name and grid columns
		tail   string // "" for tail
		cut    int
		noName bool // the trace's header has no -kernel name line
		want   []string
	}{
		{name: "agree", row: "_Z4testPf, 2, 2, 1"},
		{name: "name", row: "_Z3fooPf, 2, 2, 1",
			want: []string{"kernel-1.trace: stats.csv says _Z3fooPf grid (2,2,1), the trace's header says _Z4testPf grid (2,2,1)"}},
		{name: "grid", row: "_Z4testPf, 4, 1, 1",
			want: []string{"kernel-1.trace: stats.csv says _Z4testPf grid (4,1,1), the trace's header says _Z4testPf grid (2,2,1)"}},
		{name: "both, and cut short", row: "_Z3fooPf, 2, 1, 1", cut: 3,
			want: []string{"kernel-1.trace: 11 instruction lines, stats.csv's total_reported_insts says 14: the file may be cut short; upload it again",
				"kernel-1.trace: stats.csv says _Z3fooPf grid (2,1,1), the trace's header says _Z4testPf grid (2,2,1)"}},
		{name: "count unreadable", row: "_Z3fooPf, 2, 2, 1", tail: ", 4, 70, 1, 1, 70, 14,many\n",
			want: []string{"kernel-1.trace: stats.csv says _Z3fooPf grid (2,2,1), the trace's header says _Z4testPf grid (2,2,1)"}},
		{name: "header without a name", row: "_Z3fooPf, 2, 2, 1", noName: true},
		{name: "header without a name, other grid", row: "_Z4testPf, 2, 2, 2", noName: true,
			want: []string{"kernel-1.trace: stats.csv says _Z4testPf grid (2,2,2), the trace's header says grid (2,2,1)"}},
		{name: "grid unreadable", row: "_Z4testPf, 2, x, 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/golden/classic/in")
			p := filepath.Join(dir, "kernel-1.trace")
			if tc.noName {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, dir, "kernel-1.trace", strings.Replace(string(b), "-kernel name = _Z4testPf\n", "", 1))
			}
			cutLines(t, p, tc.cut)
			end := tc.tail
			if end == "" {
				end = tail
			}
			writeFile(t, dir, "stats.csv", statsHeader+"kernel-1.trace, "+tc.row+end)
			expectWarnings(t, dir, tc.want)
		})
	}
}

// TestStatsContradictContextHeaderWarns: per-context traces, compressed
// or not, are compared with their context's stats file.
func TestStatsContradictContextHeaderWarns(t *testing.T) {
	dir := copyDir(t, "testdata/golden/contexts/in")
	writeFile(t, dir, "stats_ctx_0x20", statsHeader+"kernel-1-ctx_0x20.trace, _Z1kv, 1, 1, 1, 1, 32, 1, 1, 32, 2,2\n")
	writeFile(t, dir, "stats_ctx_0x3", statsHeader+"kernel-1-ctx_0x3.trace.xz, _Z1kw, 3, 1, 1, 3, 32, 1, 1, 32, 1,1\n")
	want := []string{"kernel-1-ctx_0x3.trace.xz: stats_ctx_0x3 says _Z1kw grid (3,1,1), the trace's header says _Z1kv grid (1,1,1)"}
	expectWarnings(t, dir, want)
}

// TestCheckLinesPast32Bits: a count of 2^32 lines or more is not
// compared with the 32-bit one of the stats.
func TestCheckLinesPast32Bits(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "stats.csv", statsHeader+
		"kernel-1.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, -1,-1\n"+
		"kernel-2.trace, k, 1, 1, 1, 1, 32, 1, 1, 32, -1,-1\n")
	p, err := newProcessor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []kernelJob{{in: filepath.Join(dir, "kernel-1.trace")}, {in: filepath.Join(dir, "kernel-2.trace")}}
	var w tracedir.Warnings
	p.checkStats([]string{filepath.Join(dir, "kernelslist")}, jobs, []traced{{insts: 1<<32 + 5, name: "k", grid: [3]uint32{1, 1, 1}}, {insts: 1<<32 - 2, name: "k", grid: [3]uint32{1, 1, 1}}}, &w)
	want := []string{"kernel-2.trace: 4,294,967,294 instruction lines, stats.csv's total_reported_insts says 4,294,967,295: the file may be cut short; upload it again"}
	if got := w.Result(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 71974: "71,974", 1234567: "1,234,567", 1 << 32: "4,294,967,296"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
