package hwprofile_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// known reports whether the simulator's log is read for stat: a counter
// of counters.txt or a derived hit rate.
func known(stat string) bool {
	return simstats.Builtin().Index(stat) >= 0 || slices.ContainsFunc(simstats.Ratios, func(r simstats.Ratio) bool { return r.Name == stat })
}

// TestBuiltinMapping: every statistic mappings.txt names is one Cascade
// reads from the simulator's log, and it pairs those of formats.md §9 for
// both profilers.
func TestBuiltinMapping(t *testing.T) {
	m := hwprofile.Builtin()
	if err := m.Check(known); err != nil {
		t.Fatal(err)
	}
	for _, p := range []hwprofile.Profiler{hwprofile.NsightCompute, hwprofile.Nvprof} {
		var stats []string
		for _, pr := range m.Pairs {
			if pr.Profiler == p {
				stats = append(stats, pr.Stat)
			}
		}
		for _, want := range []string{"cycles", "warp_instructions", "l2_read_hits", "l2_read_accesses", "l2_write_hits",
			"l2_write_accesses", "l2_read_hit_rate", "l2_write_hit_rate", "l2_bandwidth", "l1d_read_accesses",
			"dram_reads", "dram_writes", "occupancy", "shmem_bank_conflicts"} {
			if !slices.Contains(stats, want) {
				t.Errorf("%s: no pair for %s", p, want)
			}
		}
	}
	if err := m.Check(func(s string) bool { return s != "dram_reads" }); err == nil || !strings.HasPrefix(err.Error(), "mappings.txt:") {
		t.Errorf("an unknown statistic: %v", err)
	}
}

func bind(t *testing.T, m *hwprofile.Mapping, path string) (*hwprofile.Bound, *hwprofile.Header, []hwprofile.Launch) {
	t.Helper()
	h, ls, _ := read(t, path)
	return m.Bind(h, hwprofile.GPU{Name: ls[0].Device, CC: ls[0].CC}), h, ls
}

func evalStat(t *testing.T, b *hwprofile.Bound, l hwprofile.Launch, stat string) float64 {
	t.Helper()
	i := slices.Index(b.Stats, stat)
	if i < 0 {
		t.Fatalf("%s not bound (unmapped: %q)", stat, b.Unmapped)
	}
	return b.Eval(l.Values, nil)[i]
}

func TestBindNsightCompute(t *testing.T) {
	b, _, ls := bind(t, hwprofile.Builtin(), "testdata/ncu-raw.csv")
	for stat, want := range map[string]float64{
		"cycles":            8823,
		"dram_reads":        2512,
		"l2_read_accesses":  2500,
		"l2_read_hit_rate":  0,
		"occupancy":         22.17,
		"warp_instructions": 3840,
	} {
		if got := evalStat(t, b, ls[0], stat); !near(got, want) {
			t.Errorf("%s = %v, want %v", stat, got, want)
		}
	}
	if got := evalStat(t, b, ls[1], "l2_read_hit_rate"); !near(got, 0.5002) {
		t.Errorf("a hit rate in percent is a fraction: %v", got)
	}
	if got := evalStat(t, b, ls[1], "dram_writes"); hwprofile.Present(got) {
		t.Errorf("n/a gives %v", got)
	}
	// Absent: no column for them in this profile.
	for _, s := range []string{"l1d_read_hits", "shmem_bank_conflicts", "ipc", "l2_bandwidth"} {
		if !slices.Contains(b.Unmapped, s) || slices.Contains(b.Stats, s) {
			t.Errorf("%s: bound %v, unmapped %v", s, b.Stats, b.Unmapped)
		}
	}
	if i := slices.Index(b.Stats, "cycles"); b.Pairs[i].Expr.String() != "gpc__cycles_elapsed.max" || !strings.HasPrefix(b.Pairs[i].Source, "mappings.txt:") {
		t.Errorf("cycles from %s (%s)", b.Pairs[i].Expr, b.Pairs[i].Source)
	}
}

func TestBindNvprof(t *testing.T) {
	b, _, ls := bind(t, hwprofile.Builtin(), "testdata/nvprof-trace-metrics.csv")
	for stat, want := range map[string]float64{
		"warp_instructions": 35068,      // inst_issued, as the correlator
		"l2_read_hits":      12500,      // transactions × hit rate
		"occupancy":         59.2947,    // achieved_occupancy × 100
		"l1d_read_hit_rate": 0.5,        // global_hit_rate
		"dram_writes":       1250,       //
		"l2_read_accesses":  12500,      //
		"l2_read_hit_rate":  1,          //
		"dram_reads":        2512,       //
		"l2_write_hits":     math.NaN(), // not in this profile
	} {
		if math.IsNaN(want) {
			if slices.Contains(b.Stats, stat) {
				t.Errorf("%s bound", stat)
			}
			continue
		}
		if got := evalStat(t, b, ls[0], stat); !near(got, want) {
			t.Errorf("%s = %v, want %v", stat, got, want)
		}
	}
	if slices.Contains(b.Stats, "cycles") {
		t.Errorf("cycles without a duration")
	}
	// The GPU trace has the duration: cycles at the TITAN X's clock.
	b, _, ls = bind(t, hwprofile.Builtin(), "testdata/nvprof-gpu-trace.csv")
	if got := evalStat(t, b, ls[0], "cycles"); !near(got, 6240*1.417) {
		t.Errorf("cycles %v", got)
	}
	// On a GPU the table does not know the clock of, no cycles.
	h, _, _ := read(t, "testdata/nvprof-gpu-trace.csv")
	if b := hwprofile.Builtin().Bind(h, hwprofile.GPU{Name: "GeForce RTX 4090"}); slices.Contains(b.Stats, "cycles") {
		t.Errorf("cycles on an unknown GPU: %s", b.Pairs[slices.Index(b.Stats, "cycles")].Source)
	}
}

// TestLoadFile: a user's pairs are tried before the built-in ones, and a
// bad line names its file and line.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "pairs.txt")
	os.WriteFile(good, []byte("# mine\ncycles ncu sm_70 gpu__time_duration.sum * 1.38\nocc2 ncu all \"sm__warps_active.avg.pct_of_peak_sustained_active\" / 100\n"), 0o644)
	m, err := hwprofile.LoadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	b, _, ls := bind(t, m, "testdata/ncu-raw.csv")
	if got := evalStat(t, b, ls[0], "cycles"); !near(got, 6140*1.38) {
		t.Errorf("cycles %v: the user's pair is not preferred", got)
	}
	if got := evalStat(t, b, ls[0], "occ2"); !near(got, 0.2217) {
		t.Errorf("occ2 %v", got)
	}
	if err := m.Check(known); err == nil || err.Error() != good+`:3: statistic "occ2" is not one the simulator's log is read for (accelsim/simstats/counters.txt, CASCADE_SIM_STATS_FILE, or a derived hit rate)` {
		t.Errorf("check: %v", err)
	}
	for _, c := range []struct{ line, want string }{
		{"cycles ncu all", `:2: want statistic, profiler, GPU and an expression, got "cycles ncu all"`},
		{"cycles perf all x", `:2: cycles: profiler "perf": want ncu or nvprof`},
		{"cyc-les ncu all x", `:2: statistic "cyc-les": use letters, digits and _ only`},
		{"cycles ncu all (a + b", `:2: cycles: "(a + b": a ( is not closed`},
		{"cycles ncu all a b", `:2: cycles: "a b": unexpected "b" at character 3`},
		{"cycles ncu all 2 * 3", `:2: cycles: "2 * 3" reads no counter`},
	} {
		bad := filepath.Join(dir, "bad.txt")
		os.WriteFile(bad, []byte("# bad\n"+c.line+"\n"), 0o644)
		if _, err := hwprofile.LoadFile(bad); err == nil || err.Error() != bad+c.want {
			t.Errorf("%q: %v, want %s", c.line, err, c.want)
		}
	}
}

func TestExpr(t *testing.T) {
	h := &hwprofile.Header{Columns: []string{"a", "b.sum", "Grid X", "ID"}, Identity: []bool{false, false, false, true}}
	vals := []float64{6, 3, 2, 1}
	for _, c := range []struct {
		expr string
		want float64
	}{
		{"a + b.sum * 2", 12},
		{"(a + b.sum) * 2", 18},
		{"a / b.sum / 2", 1},
		{"a - -b.sum", 9},
		{`"Grid X" * 1e3`, 2000},
		{"a / (b.sum - 3)", math.NaN()}, // division by zero: absent
	} {
		m := &hwprofile.Mapping{Pairs: []hwprofile.Pair{{Stat: "s", Profiler: hwprofile.NsightCompute, GPU: "all", Expr: mustExpr(t, c.expr)}}}
		h.Profiler = hwprofile.NsightCompute
		b := m.Bind(h, hwprofile.GPU{})
		if len(b.Stats) != 1 {
			t.Fatalf("%q not bound", c.expr)
		}
		got := b.Eval(vals, nil)[0]
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && got != c.want {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
	}
	// An identity column is no counter.
	m := &hwprofile.Mapping{Pairs: []hwprofile.Pair{{Stat: "s", Profiler: hwprofile.NsightCompute, GPU: "all", Expr: mustExpr(t, "ID + a")}}}
	if b := m.Bind(h, hwprofile.GPU{}); len(b.Stats) != 0 {
		t.Errorf("bound over an identity column")
	}
}

func mustExpr(t *testing.T, s string) *hwprofile.Expr {
	t.Helper()
	e, err := hwprofile.ParseExpr(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
