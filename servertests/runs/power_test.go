package runs_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestRunPower: a run whose config enables AccelWattch
// (-power_simulation_enabled 1 appended to SM7_QV100's gpgpusim.config)
// reads the stand-in's power report when it ends: its statistics gain
// power (W), its breakdown, energy (J: power over the kernel's cycles at
// 1132 MHz) and instructions per joule, each kernel's from its block, the
// run's the mean, the sum and the ratio of sums; a run of the same trace
// on a config without power has the statistics it always had.
func TestRunPower(t *testing.T) {
	t.Parallel()
	cfgs := simconfigtest.Write(t, t.TempDir())
	f, err := os.OpenFile(filepath.Join(cfgs, simconfigtest.QV100, "gpgpusim.config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n-power_simulation_enabled 1\n")
	f.Close()
	s := server(t, "ok", func(c *app.Config) { c.SimConfigsDir = cfgs })
	withPower := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.QV100})
	without := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, withPower.ID, "SUCCEEDED", "FAILED")
	waitRun(t, s, without.ID, "SUCCEEDED", "FAILED")

	tab := simstats.Builtin()
	plain := getStats(t, s, without.ID)
	if plain.State != "SUCCEEDED" || len(plain.StatCounters) != len(tab.Counters)+4 {
		t.Fatalf("run without power: %s, %d counters, want the table's %d and 4 hit rates", plain.State, len(plain.StatCounters), len(tab.Counters))
	}
	for _, c := range plain.StatCounters {
		if c.Name == "power" || c.Name == "energy" || c.Name == "insts_per_joule" {
			t.Errorf("run without power has %s", c.Name)
		}
	}

	got := getStats(t, s, withPower.ID)
	if got.State != "SUCCEEDED" || len(got.Kernels) != 4 {
		t.Fatalf("run with power: %s, %d kernels", got.State, len(got.Kernels))
	}
	names := make([]string, len(got.StatCounters))
	for i, c := range got.StatCounters {
		names[i] = c.Name
	}
	at := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("no statistic %s among %v", name, names)
		}
		return i
	}
	// The log's counters and the hit rates come first, as without power.
	for i, c := range tab.Counters {
		if names[i] != c.Name {
			t.Fatalf("statistic %d is %s, want %s", i, names[i], c.Name)
		}
	}
	power, energy, dram, ipj, cycles, insts := at("power"), at("energy"), at("power_dram"), at("insts_per_joule"), at("cycles"), at("instructions")
	if c := got.StatCounters[power]; c.Kind != "KERNEL" || c.Unit != "W" {
		t.Errorf("power: %+v", c)
	}
	if c := got.StatCounters[energy]; c.Kind != "AGGREGATE" || c.Unit != "J" {
		t.Errorf("energy: %+v", c)
	}
	if c := got.StatCounters[ipj]; c.Kind != "DERIVED" || c.Unit != "insts/J" {
		t.Errorf("insts_per_joule: %+v", c)
	}
	var sumPower, sumEnergy, sumInsts float64
	for i, k := range got.Kernels {
		avg, breakdown := fakesim.Power(i + 1)
		e := avg * *k.StatValues[cycles] / 1132e6
		for name, w := range map[string]float64{"power": avg, "power_dram": breakdown[28], "energy": e, "insts_per_joule": *k.StatValues[insts] / e} {
			if v := k.StatValues[at(name)]; v == nil || math.Abs(*v-w) > 1e-9*w {
				t.Errorf("kernel %d: %s = %v, want %v", i+1, name, v, w)
			}
		}
		sumPower += avg
		sumEnergy += e
		sumInsts += *k.StatValues[insts]
	}
	for name, w := range map[string]float64{"power": sumPower / 4, "energy": sumEnergy, "insts_per_joule": sumInsts / sumEnergy} {
		if v := got.StatTotals[at(name)]; v == nil || math.Abs(*v-w) > 1e-9*w {
			t.Errorf("run: %s = %v, want %v", name, v, w)
		}
	}
	if got.StatKernels[dram] != 4 || got.StatKernels[ipj] != 4 {
		t.Errorf("kernels with power_dram %d, insts_per_joule %d; want 4", got.StatKernels[dram], got.StatKernels[ipj])
	}
}
