package simstats_test

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// TestStallUnits: the stall counters said "cycles", which read as the
// kernel's. GPGPU-Sim counts the memory stage's stalls once per SM and
// cycle, summed over the SMs, and DRAM-full and interconnect stalls once
// per memory sub-partition and L2 or interconnect cycle: their units say
// so.
func TestStallUnits(t *testing.T) {
	for _, c := range simstats.Builtin().Counters {
		if !strings.HasPrefix(c.Name, "stall_") {
			continue
		}
		want := "SM-cycles"
		if c.Name == "stall_dram_full" || c.Name == "stall_icnt_to_shader" {
			want = "part-cycles"
		}
		if c.Unit != want {
			t.Errorf("%s: unit %q, want %q", c.Name, c.Unit, want)
		}
	}
}
