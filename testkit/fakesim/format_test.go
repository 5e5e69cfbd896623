package fakesim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// realLogs are what the real accel-sim.out printed for two vecAdd kernels
// under SM6_TITANX (loads bypass L1D) and SM7_QV100.
var realLogs = []string{
	"../../accelsim/simstats/testdata/vecadd-x2-SM6_TITANX.log",
	"../../accelsim/simstats/testdata/vecadd-x2-SM7_QV100.log",
}

// number is a printed number with the blanks a %12.4f pads it with; -nan
// is what the simulator prints for a value it cannot compute (an
// occupancy of a kernel whose warps it did not sample).
var number = regexp.MustCompile(`( +)?(-?[0-9]+(\.[0-9]+)?|-?nan)`)

// shape is a line with every number written N (padded ones " N"): two
// lines of one shape differ in their numbers only.
func shape(line string) string {
	return number.ReplaceAllStringFunc(line, func(m string) string {
		if strings.HasPrefix(m, " ") {
			return " N"
		}
		return "N"
	})
}

// read are the lines Cascade reads: those a counter of the built-in table
// matches, and those simlog acts on.
func read(line string) (what string, ok bool) {
	for _, c := range simstats.Builtin().Counters {
		if c.Pattern.MatchString(line) {
			return "counter " + c.Name, true
		}
	}
	for _, p := range []string{"kernel_name = ", "kernel_launch_uid = ", "gpu_sim_cycle = ", "gpu_sim_insn = ", "gpu_ipc = ",
		"launching kernel name: ", "Processing kernel ", "GPGPU-Sim: *** exit detected ***", "Accel-Sim [build ", "gpgpu_simulation_rate"} {
		if strings.HasPrefix(strings.TrimSpace(line), p) {
			return "simlog's " + strings.TrimSpace(p), true
		}
	}
	return "", false
}

// TestFormatMatchesTheRealLog: for every line Cascade reads, the stand-in
// prints it in the shape the real simulator does (same words, spacing,
// tabs and order of fields; numbers aside), and every such line of the
// real logs has its twin in the stand-in's: the stand-in can stand in for
// everything Cascade parses.
func TestFormatMatchesTheRealLog(t *testing.T) {
	bin := fakesim.Build(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"gpgpusim.config": "-gpgpu_clock_domains 1000:1000:1000:1000\n",
		"kernel-1.traceg": "-kernel name = _Z6vecAddPdS_S_i\n\n#traces format\n",
		"kernel-2.traceg": "-kernel name = _Z6vecAddPdS_S_i\n\n#traces format\n",
		"list.g":          "MemcpyHtoD,0x00007f32c5500000,800000\nkernel-1.traceg\nkernel-2.traceg\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(bin, "-trace", filepath.Join(dir, "list.g"), "-config", filepath.Join(dir, "gpgpusim.config")).Output()
	if err != nil {
		t.Fatal(err)
	}
	shapes := func(text string) map[string][]string { // what → shapes
		m := map[string][]string{}
		for _, l := range strings.Split(text, "\n") {
			if what, ok := read(l); ok {
				s := shape(l)
				if strings.HasPrefix(what, "simlog's Processing") || strings.HasPrefix(what, "simlog's Accel-Sim") {
					s = what // paths and build strings differ by design
				}
				if !slices.Contains(m[what], s) {
					m[what] = append(m[what], s)
				}
			}
		}
		return m
	}
	fake := shapes(string(out))
	real := map[string][]string{}
	for _, path := range realLogs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for what, ss := range shapes(string(data)) {
			for _, s := range ss {
				if !slices.Contains(real[what], s) {
					real[what] = append(real[what], s)
				}
			}
		}
	}
	for what, ss := range real {
		for _, s := range ss {
			if !slices.Contains(fake[what], s) {
				t.Errorf("%s: the real simulator prints %q; the stand-in prints %q", what, s, fake[what])
			}
		}
	}
	for what, ss := range fake {
		for _, s := range ss {
			if !slices.Contains(real[what], s) {
				t.Errorf("%s: the stand-in prints %q, which the real simulator never does (it prints %q)", what, s, real[what])
			}
		}
	}

	// And the stand-in's statistics read as the real ones do: every
	// counter has a value for both kernels.
	p := simlog.NewParser(2).ReadStats(simstats.Builtin())
	p.Write(out)
	if o := p.Outcome(simlog.Exit{}); !o.Succeeded {
		t.Fatal(o.Reason)
	}
	for i, k := range p.Kernels() {
		v, err := simstats.Decode(k.Stats)
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range simstats.Builtin().Counters {
			if c.Name != "occupancy" && !simstats.Present(v[j]) {
				t.Errorf("kernel %d: the stand-in gives no %s", i+1, c.Name)
			}
		}
	}
}
