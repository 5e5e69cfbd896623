package accelwattch_test

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// real is testdata/vecadd-x2-SM7_QV100.log: the accelwattch_power_report.log
// the real accel-sim.out (Accel-Sim dev 73f9fac, GPGPU-Sim 667834cf) wrote
// simulating vecAdd of ../shared/traces/vecadd-sm61 twice in one run on
// SM7_QV100 with -power_simulation_enabled 1 after the -config files, as
// written (the second kernel finds its data in L2: no DRAM power).
const real = "testdata/vecadd-x2-SM7_QV100.log"

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestRealReport: both kernels' figures are those the report prints
// (read off it by hand), and the breakdown adds up to the average power.
func TestRealReport(t *testing.T) {
	ks, err := accelwattch.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 {
		t.Fatalf("%d kernels, want 2", len(ks))
	}
	want := []struct {
		avg, max, min, dram, static, constant float64
	}{
		{83.1298, 152.136, 55.4988, 13.4299, 12.7145, 32.3252},
		{69.4478, 0, 0, 0, 0, 32.3252},
	}
	comp := func(k accelwattch.Kernel, name string) float64 {
		for i, c := range accelwattch.Components {
			if c == name {
				return k.Breakdown[i]
			}
		}
		t.Fatalf("no component %s", name)
		return 0
	}
	for i, k := range ks {
		if k.UID != i+1 || k.Name != "_Z6vecAddPdS_S_i" {
			t.Errorf("kernel %d: uid %d name %q", i, k.UID, k.Name)
		}
		w := want[i]
		if !near(k.AvgPower, w.avg) || !near(comp(k, "DRAMP"), w.dram) || !near(comp(k, "CONSTP"), w.constant) {
			t.Errorf("kernel %d: avg %v DRAMP %v CONSTP %v, want %v %v %v", i+1, k.AvgPower, comp(k, "DRAMP"), comp(k, "CONSTP"), w.avg, w.dram, w.constant)
		}
		if i == 0 && (!near(k.MaxPower, w.max) || !near(k.MinPower, w.min) || !near(comp(k, "STATICP"), w.static)) {
			t.Errorf("kernel 1: max %v min %v STATICP %v", k.MaxPower, k.MinPower, comp(k, "STATICP"))
		}
		sum := 0.0
		for j, v := range k.Breakdown {
			if math.IsNaN(v) {
				t.Errorf("kernel %d: no %s", i+1, accelwattch.Components[j])
			}
			sum += v
		}
		if math.Abs(sum-k.AvgPower) > 1e-3 {
			t.Errorf("kernel %d: the breakdown adds up to %v, not %v", i+1, sum, k.AvgPower)
		}
	}
}

// TestValues: a kernel's statistics are aligned with Counters; its energy
// is its power over its cycles at the core clock (8,823 cycles at
// SM7_QV100's 1132 MHz).
func TestValues(t *testing.T) {
	ks, err := accelwattch.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := simstats.NewTable(accelwattch.Counters())
	if err != nil {
		t.Fatal(err)
	}
	v := ks[0].Values(8823, 1132)
	if len(v) != len(tab.Counters) {
		t.Fatalf("%d values for %d counters", len(v), len(tab.Counters))
	}
	if got := v[tab.Index("power")]; got != 83.1298 {
		t.Errorf("power %v", got)
	}
	if got, want := v[tab.Index("energy")], 83.1298*8823/1132e6; !near(got, want) {
		t.Errorf("energy %v J, want %v", got, want)
	}
	if got := v[tab.Index("power_dram")]; got != 13.4299 {
		t.Errorf("power_dram %v", got)
	}
	if got := v[tab.Index("power_fp_exp")]; got != 0 {
		t.Errorf("power_fp_exp %v", got)
	}
	if e := ks[0].Values(8823, 0)[tab.Index("energy")]; simstats.Present(e) {
		t.Errorf("energy without a clock: %v", e)
	}
}

// TestStreaming: a block is given once the next one starts, the last at
// the end; nan is absent, not zero; a block may lack figures.
func TestStreaming(t *testing.T) {
	r := accelwattch.NewReader(strings.NewReader("kernel_name = a\nkernel_launch_uid = 7\nkernel_avg_power = -nan\n\nKernel Average Power Data:\ngpu_avg_DRAMP, = 2.5\nkernel_name = b\r\nkernel_avg_power = 1e1\n"), "r.log")
	a, err := r.Next()
	if err != nil || a.Name != "a" || a.UID != 7 || !math.IsNaN(a.AvgPower) || a.Breakdown[28] != 2.5 {
		t.Fatalf("first: %+v %v", a, err)
	}
	b, err := r.Next()
	if err != nil || b.Name != "b" || b.UID != 0 || b.AvgPower != 10 || !math.IsNaN(b.MaxPower) {
		t.Fatalf("second: %+v %v", b, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last: %v", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("again: %v", err)
	}
}

// TestMalformed: a malformed report's error names the file and the line.
func TestMalformed(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"not a number", "kernel_name = k\nkernel_avg_power = 8x3\n", `p.log:2: kernel_avg_power = "8x3" is not a number`},
		{"component not a number", "kernel_name = k\n\ngpu_avg_DRAMP, = ?\n", `p.log:3: gpu_avg_DRAMP = "?" is not a number`},
		{"no equals", "kernel_name = k\nkernel_avg_power 83\n", `p.log:2: want "name = value", not "kernel_avg_power 83"`},
		{"before a kernel", "\nkernel_avg_power = 83\n", "p.log:2: kernel_avg_power before the first kernel_name"},
		{"bad uid", "kernel_name = k\nkernel_launch_uid = one\n", `p.log:2: kernel_launch_uid "one" is not a launch uid`},
		{"twice", "kernel_name = k\nkernel_avg_power = 1\nkernel_avg_power = 2\n", `p.log:3: kernel_avg_power given twice in kernel "k"'s block`},
		{"no name", "kernel_name =\n", "p.log:1: kernel_name without a name"},
		{"long line", "kernel_name = k\n" + strings.Repeat("x", 2<<20) + "\n", "p.log:2: a line longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := accelwattch.NewReader(strings.NewReader(c.text), "p.log")
			var err error
			for err == nil {
				_, err = r.Next()
			}
			var e *accelwattch.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			if _, again := r.Next(); again != err {
				t.Errorf("next after the error: %v", again)
			}
		})
	}
	if _, err := accelwattch.ReadFile("testdata/none.log"); err == nil || !strings.Contains(err.Error(), "testdata/none.log") {
		t.Errorf("a missing report: %v", err)
	}
}

func TestCounterNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range accelwattch.Counters() {
		if seen[c.Name] {
			t.Errorf("%s twice", c.Name)
		}
		seen[c.Name] = true
		if simstats.Builtin().Index(c.Name) >= 0 {
			t.Errorf("%s is a built-in counter's name", c.Name)
		}
	}
	for c, want := range map[string]string{"DRAMP": "power_dram", "STATICP": "power_static", "FP_EXP": "power_fp_exp", "IDLE_COREP": "power_idle_core"} {
		if got := accelwattch.ComponentCounter(c); got != want {
			t.Errorf("%s: %s, want %s", c, got, want)
		}
	}
}
