package simstats_test

import (
	"bufio"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// readLog reads a log in testdata: two vecAdd kernels simulated one after
// the other by the real accel-sim.out (Accel-Sim dev 73f9fac, GPGPU-Sim
// 667834cf) under one config; the second finds the first one's data in L2.
func readLog(t testing.TB, name string, tab *simstats.Table) []simstats.Kernel {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := simstats.NewReader(tab)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		r.Line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	r.Finish()
	return r.Take()
}

func value(t *testing.T, tab *simstats.Table, k simstats.Kernel, name string) float64 {
	t.Helper()
	i := tab.Index(name)
	if i < 0 {
		t.Fatalf("no counter %q", name)
	}
	return k.Values[i]
}

// TestRealLogs: every counter of the table equals what the real log
// prints, aggregate ones diffed between the two kernels (the expected
// figures are read off the logs by hand: grep the counter's line).
func TestRealLogs(t *testing.T) {
	tab := simstats.Builtin()
	cases := []struct {
		log  string
		want [2]map[string]float64
	}{
		{"vecadd-x2-SM6_TITANX.log", [2]map[string]float64{{
			"instructions": 2203168, "cycles": 11789, "sim_seconds": 13, "warp_instructions": 71974,
			"l2_read_hits": 0, "l2_read_accesses": 50000, "dram_reads": 50000, "dram_writes": 88,
			"stall_dram_full": 8101, "stall_icnt_to_shader": 0, "stall_shared_mem": 104292,
			"stall_gmem_coalescing": 65625, "l1_bank_conflicts": 0,
			"warp_state_stall": 305864, "warp_state_idle": 45704, "warp_state_scoreboard": 269323, "warp_state_full": 68849,
			"ipc": 186.8834, "l2_bandwidth": 288.4723,
			"sim_rate_insts": 169474, "sim_rate_cycles": 906, "silicon_slowdown": 1564017, "total_ipc": 186.8834,
		}, {
			"instructions": 2203168, "cycles": 11255, "sim_seconds": 22 - 13, "warp_instructions": 71974,
			"l2_read_hits": 41976, "l2_read_accesses": 50000, "dram_reads": 8024,
			"stall_dram_full": 0, "stall_shared_mem": 213014 - 104292, "stall_gmem_coalescing": 131250 - 65625,
			"warp_state_stall": 635198 - 305864, "warp_state_idle": 83530 - 45704, "warp_state_scoreboard": 461808 - 269323,
			"ipc": 195.7502, "l2_bandwidth": 302.1590,
			"sim_rate_insts": 200288, "sim_rate_cycles": 1047, "silicon_slowdown": 1353390, "total_ipc": 191.2140,
		}}},
		{"vecadd-x2-SM7_QV100.log", [2]map[string]float64{{
			"instructions": 2203168, "cycles": 8823, "warp_instructions": 71974,
			"l1d_read_hits": 0, "l1d_read_accesses": 50000, "l1d_read_mshr_hits": 0,
			"l2_read_accesses": 50000, "dram_reads": 50000,
			"l1_bank_conflicts": 52923, "stall_gmem_resource": 52923, "stall_gmem_coalescing": 9375,
			"stall_dram_full": 36216, "stall_shared_mem": 62298,
			"warp_state_stall": 270938, "warp_state_idle": 194939, "warp_state_scoreboard": 424930,
			"l2_bandwidth": 307.9225, "sim_rate_insts": 104912, "sim_rate_cycles": 420, "silicon_slowdown": 2695238,
			"total_ipc": 249.7074,
		}, {
			"cycles": 8105, "l1d_read_accesses": 50000, "l2_read_hits": 50000, "l2_read_accesses": 50000,
			"dram_reads": 0, "stall_dram_full": 0, "l1_bank_conflicts": 91576 - 52923,
			"warp_state_stall": 481597 - 270938, "l2_bandwidth": 335.2005, "total_ipc": 260.2987,
		}}},
	}
	for _, c := range cases {
		t.Run(c.log, func(t *testing.T) {
			ks := readLog(t, c.log, tab)
			if len(ks) != 2 {
				t.Fatalf("%d kernels, want 2", len(ks))
			}
			for k, want := range c.want {
				if ks[k].UID != k+1 || ks[k].Name != "_Z6vecAddPdS_S_i" {
					t.Errorf("kernel %d: uid %d name %q", k, ks[k].UID, ks[k].Name)
				}
				for name, w := range want {
					if got := value(t, tab, ks[k], name); math.Abs(got-w) > 1e-4 {
						t.Errorf("kernel %d: %s = %v, want %v", k+1, name, got, w)
					}
				}
				// -nan is absent, not zero.
				if got := value(t, tab, ks[k], "occupancy"); simstats.Present(got) {
					t.Errorf("kernel %d: occupancy = %v, want absent (the log prints -nan%%)", k+1, got)
				}
			}
		})
	}
}

// TestL1DAbsentWhereLoadsBypassIt: SM6_TITANX's loads bypass L1D, so the
// log's Total_core_cache_stats section is empty: absent, not zero.
func TestL1DAbsentWhereLoadsBypassIt(t *testing.T) {
	tab := simstats.Builtin()
	ks := readLog(t, "vecadd-x2-SM6_TITANX.log", tab)
	if v := value(t, tab, ks[0], "l1d_read_accesses"); simstats.Present(v) {
		t.Errorf("l1d_read_accesses = %v, want absent", v)
	}
	rates := simstats.Derive(tab, ks[0].Values)
	if simstats.Present(rates[2]) {
		t.Errorf("l1d_read_hit_rate = %v, want absent", rates[2])
	}
}

func TestDerivedAndSummary(t *testing.T) {
	tab := simstats.Builtin()
	ks := readLog(t, "vecadd-x2-SM6_TITANX.log", tab)
	if r := simstats.Derive(tab, ks[1].Values)[0]; math.Abs(r-41976.0/50000) > 1e-12 {
		t.Errorf("kernel 2 l2_read_hit_rate = %v", r)
	}
	vs := []simstats.Values{ks[0].Values, ks[1].Values}
	tot := simstats.Totals(tab, vs)
	if got := tot[tab.Index("cycles")]; got != 11789+11255 {
		t.Errorf("run cycles = %v, want the last cumulative value 23044", got)
	}
	if got := tot[tab.Index("ipc")]; math.Abs(got-(186.8834+195.7502)/2) > 1e-9 {
		t.Errorf("run ipc = %v, want the mean", got)
	}
	if got := tot[tab.Index("sim_rate_insts")]; got != 200288 {
		t.Errorf("run sim_rate_insts = %v, want the last", got)
	}
	// The run's hit rate comes from summed counters: 41976 / 100000.
	if r := simstats.Derive(tab, tot)[0]; math.Abs(r-0.41976) > 1e-12 {
		t.Errorf("run l2_read_hit_rate = %v, want 0.41976", r)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	in := simstats.Values{0, 1, -5, 2203168, 186.8834, simstats.Absent, 1 << 60, math.MaxFloat64}
	b := simstats.Encode(nil, in)
	out, err := simstats.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d values, want %d", len(out), len(in))
	}
	for i := range in {
		if in[i] != out[i] && !(math.IsNaN(in[i]) && math.IsNaN(out[i])) {
			t.Errorf("value %d: %v, want %v", i, out[i], in[i])
		}
	}
	if _, err := simstats.Decode([]byte{7}); err == nil {
		t.Error("a bad tag decoded")
	}
	ks := readLog(t, "vecadd-x2-SM7_QV100.log", simstats.Builtin())
	if n := len(simstats.Encode(nil, ks[0].Values)); n > 160 {
		t.Errorf("a kernel's %d values take %d bytes", len(ks[0].Values), n)
	}
}

func TestCountersFile(t *testing.T) {
	good := "# a comment\nl2_texture_hits aggregate accesses ^\\s*L2_cache_stats_breakdown\\[TEXTURE_ACC_R\\]\\[HIT\\]\\s*=\\s*(\\S+)\n"
	cs, err := simstats.ParseCounters(strings.NewReader(good), "mine.txt")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := simstats.Builtin().With(cs)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Index("l2_texture_hits") != len(simstats.Builtin().Counters) {
		t.Errorf("the added counter is not last")
	}
	ks := readLog(t, "vecadd-x2-SM7_QV100.log", tab)
	if v := value(t, tab, ks[0], "l2_texture_hits"); v != 0 {
		t.Errorf("l2_texture_hits = %v, want 0 as printed", v)
	}

	for _, c := range []struct{ name, text, want string }{
		{"too few fields", "x aggregate\n", "mine.txt:1: want name, kind, unit"},
		{"bad kind", "\n\nx often n ^x=(\\d+)\n", "mine.txt:3: x: kind \"often\""},
		{"bad regexp", "x rate n ^x=(\\d+\n", "mine.txt:1: x: error parsing regexp"},
		{"no group", "x rate n ^x=\\d+\n", "mine.txt:1: x: \"^x=\\\\d+\" has no group"},
		{"bad name", "x-y rate n ^x=(\\d+)\n", "mine.txt:1: name \"x-y\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := simstats.ParseCounters(strings.NewReader(c.text), "mine.txt")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	cs, _ = simstats.ParseCounters(strings.NewReader("cycles aggregate cycles ^x=(\\d+)\n"), "mine.txt")
	if _, err := simstats.Builtin().With(cs); err == nil || !strings.Contains(err.Error(), `"cycles" is defined twice`) {
		t.Errorf("a duplicate name: %v", err)
	}
}

// TestOptionalRatio: instructions per joule is derived only by a table
// with an energy counter: the built-in table derives the hit rates alone,
// as before power was read.
func TestOptionalRatio(t *testing.T) {
	if n := len(simstats.RatiosOf(simstats.Builtin())); n != 4 {
		t.Fatalf("the built-in table derives %d ratios, want the 4 hit rates", n)
	}
	tab, err := simstats.Builtin().With([]simstats.Counter{{Name: "energy", Kind: simstats.Aggregate, Unit: "J"}})
	if err != nil {
		t.Fatal(err)
	}
	rs := simstats.RatiosOf(tab)
	if len(rs) != 5 || rs[4].Name != "insts_per_joule" || rs[4].Unit != "insts/J" {
		t.Fatalf("ratios %+v", rs)
	}
	v := make(simstats.Values, len(tab.Counters))
	for i := range v {
		v[i] = simstats.Absent
	}
	v[tab.Index("instructions")], v[tab.Index("energy")] = 2203168, 0.000648
	if got := simstats.Derive(tab, v)[4]; math.Abs(got-2203168/0.000648) > 1e-3 {
		t.Errorf("insts_per_joule %v", got)
	}
}
