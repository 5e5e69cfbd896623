package fakesim_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// realPowerReport is what the real accel-sim.out wrote for two vecAdd
// kernels on SM7_QV100 with -power_simulation_enabled 1.
const realPowerReport = "../../accelsim/accelwattch/testdata/vecadd-x2-SM7_QV100.log"

// TestPowerReport: with -power_simulation_enabled 1, on the command line
// or in a config file, the stand-in writes accelwattch_power_report.log in
// its working directory, its lines in the real report's shapes (none the
// real one never prints, every one package accelwattch reads), with the
// figures of fakesim.Power; without it, no report.
func TestPowerReport(t *testing.T) {
	bin := fakesim.Build(t)
	for _, how := range []string{"none", "command line", "config"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			config := "-gpgpu_clock_domains 1000:1000:1000:1000\n"
			if how == "config" {
				config += "-power_simulation_enabled 1\n"
			}
			for name, text := range map[string]string{
				"gpgpusim.config": config,
				"kernel-1.traceg": "-kernel name = _Z6vecAddPdS_S_i\n\n#traces format\n",
				"kernel-2.traceg": "-kernel name = _Z6vecAddPdS_S_i\n\n#traces format\n",
				"list.g":          "kernel-1.traceg\nkernel-2.traceg\n",
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"-trace", "list.g", "-config", "gpgpusim.config"}
			if how == "command line" {
				args = append(args, "-power_simulation_enabled", "1")
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			report := filepath.Join(dir, accelwattch.ReportName)
			if how == "none" {
				if _, err := os.Stat(report); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a report without power: %v", err)
				}
				return
			}
			ks, err := accelwattch.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 2 {
				t.Fatalf("%d kernels", len(ks))
			}
			for i, k := range ks {
				avg, breakdown := fakesim.Power(i + 1)
				if k.UID != i+1 || k.Name != "_Z6vecAddPdS_S_i" || k.AvgPower != avg || !slices.Equal(k.Breakdown, breakdown) {
					t.Errorf("kernel %d: %+v, want %v W as %v", i+1, k, avg, breakdown)
				}
			}
			fake, real := powerShapes(t, report), powerShapes(t, realPowerReport)
			for _, s := range real {
				if readByAccelwattch(s) && !slices.Contains(fake, s) {
					t.Errorf("the real report has %q; the stand-in's has not", s)
				}
			}
			for _, s := range fake {
				if !slices.Contains(real, s) {
					t.Errorf("the stand-in's report has %q; the real one never does", s)
				}
			}
		})
	}
}

// readByAccelwattch reports whether package accelwattch reads a line of
// shape s: a kernel's name and uid, its powers, its average breakdown.
func readByAccelwattch(s string) bool {
	if strings.HasPrefix(s, "kernel_") {
		return true
	}
	for _, c := range accelwattch.Components {
		if k := shape("gpu_avg_" + c); strings.HasPrefix(s, k+",") || strings.HasPrefix(s, k+" ") {
			return true
		}
	}
	return false
}

// powerShapes are the shapes of a report's lines (numbers written N,
// kernel names NAME).
func powerShapes(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		s := shape(l)
		if strings.HasPrefix(l, "kernel_name = ") {
			s = "kernel_name = NAME " // names differ by design
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
