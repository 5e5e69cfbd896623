package accelwattch

import (
	"math"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// The names of the statistics a kernel's power gives (see [Counters]).
const (
	PowerCounter  = "power"
	EnergyCounter = "energy"
)

// Counters are the simulator statistics a report gives each kernel, in
// the order of [Kernel.Values]: its average power ("power", W), highest
// and lowest ("power_max", "power_min"), its energy ("energy", J: average
// power × the kernel's simulated time), then the average power of each of
// [Components] ("power_dram" for DRAMP, "power_static" for STATICP, ...).
// Powers are per-kernel values (a run's is the mean of its kernels'),
// energy an aggregate one (a run's is the sum). They carry no expression:
// they are read from the report, never from the log.
func Counters() []simstats.Counter {
	cs := []simstats.Counter{
		{Name: PowerCounter, Kind: simstats.PerKernel, Unit: "W"},
		{Name: "power_max", Kind: simstats.PerKernel, Unit: "W"},
		{Name: "power_min", Kind: simstats.PerKernel, Unit: "W"},
		{Name: EnergyCounter, Kind: simstats.Aggregate, Unit: "J"},
	}
	for _, c := range Components {
		cs = append(cs, simstats.Counter{Name: ComponentCounter(c), Kind: simstats.PerKernel, Unit: "W"})
	}
	return cs
}

// ComponentCounter is the name of the statistic of one of [Components]:
// "power_" and the component's name in lower case, without the P that
// ends every name but FP_EXP's.
func ComponentCounter(c string) string {
	if c != "FP_EXP" {
		c = strings.TrimSuffix(c, "P")
	}
	return "power_" + strings.ToLower(c)
}

// Values returns k's value of each of [Counters]; its energy is its
// average power over its simulated time, cycles at a core clock of
// coreClockMHz (absent without a clock or cycles).
func (k Kernel) Values(cycles int64, coreClockMHz float64) simstats.Values {
	energy := simstats.Absent
	if coreClockMHz > 0 && cycles > 0 && !math.IsNaN(k.AvgPower) {
		energy = k.AvgPower * float64(cycles) / (coreClockMHz * 1e6)
	}
	v := simstats.Values{k.AvgPower, k.MaxPower, k.MinPower, energy}
	for i := range Components {
		f := simstats.Absent
		if i < len(k.Breakdown) {
			f = k.Breakdown[i]
		}
		v = append(v, f)
	}
	return v
}
