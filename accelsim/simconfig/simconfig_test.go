package simconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

const traceCfg = "-trace_opcode_latency_initiation_int 2,2\n"

func TestLoad(t *testing.T) {
	dir := simconfigtest.Write(t, t.TempDir())
	write := func(rel, text string) { simconfigtest.WriteFile(t, filepath.Join(dir, rel), text) }

	// Broken and unusual configs, each listed with its reason.
	write("A_NO_TRACE/gpgpusim.config", "-gpgpu_compute_capability_major 9\n-gpgpu_compute_capability_minor 0\n")
	write("B_NO_GPGPUSIM/trace.config", traceCfg)
	write("C_BAD_CC/gpgpusim.config", "-gpgpu_compute_capability_major nine\n-gpgpu_compute_capability_minor 0\n")
	write("C_BAD_CC/trace.config", traceCfg)
	write("D_NO_CC/gpgpusim.config", "-gpgpu_clock_domains 1000:1000:1000:1000\n")
	write("D_NO_CC/trace.config", traceCfg)
	write("E_BAD_CLOCK/gpgpusim.config", "-gpgpu_compute_capability_major 8\n-gpgpu_compute_capability_minor 0\n-gpgpu_clock_domains fast:1:1:1\n")
	write("E_BAD_CLOCK/trace.config", traceCfg)
	// Repeated options: the last one read wins, and trace.config is read
	// after gpgpusim.config. Commented-out options never count.
	write("F_REPEATED/gpgpusim.config", strings.Join([]string{
		"-gpgpu_compute_capability_major 7 # was Volta",
		"-gpgpu_compute_capability_minor 5",
		"-gpgpu_clock_domains 1000.0:1000.0:1000.0:1000.0",
		"-gpgpu_compute_capability_major 8",
		"#-gpgpu_compute_capability_minor 2",
		"-gpgpu_flush_l1_cache -gpgpu_clock_domains 1200:1:1:1",
	}, "\n"))
	write("F_REPEATED/trace.config", "-gpgpu_clock_domains 1410.5:1410.5:1410.5:1215.0\n")
	write("G_NO_CLOCK/gpgpusim.config", "-gpgpu_compute_capability_major 10\n-gpgpu_compute_capability_minor 0\n")
	write("G_NO_CLOCK/trace.config", traceCfg)
	write(".hidden/gpgpusim.config", "")
	write("README.txt", "not a config")
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "H_DANGLING")); err != nil {
		t.Fatal(err)
	}

	cfgs, err := simconfig.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name, cc string
		clock    float64
		err      string // substring; "" for none
	}
	want := []row{
		{"A_NO_TRACE", "", 0, "trace.config: missing"},
		{"B_NO_GPGPUSIM", "", 0, "gpgpusim.config: missing"},
		{"C_BAD_CC", "", 0, `-gpgpu_compute_capability_major "nine": not a number`},
		{"D_NO_CC", "", 1000, "no -gpgpu_compute_capability_major"},
		{"E_BAD_CLOCK", "8.0", 0, "core clock is not a positive number"},
		{"F_REPEATED", "8.5", 1410.5, ""},
		{"G_NO_CLOCK", "10.0", 0, ""},
		{"H_DANGLING", "", 0, "directory: stat "},
		{"SM6_TITANX", "6.1", 1417, ""},
		{"SM7_QV100", "7.0", 1132, ""},
		{"SM86_RTX3070", "8.6", 1132, ""},
		{"SM90_H100", "9.0", 1755, ""},
	}
	if len(cfgs) != len(want) {
		t.Fatalf("got %d configs %+v, want %d", len(cfgs), cfgs, len(want))
	}
	for i, w := range want {
		c := cfgs[i]
		t.Run(w.name, func(t *testing.T) {
			if c.Name != w.name || c.ComputeCapability != w.cc || c.CoreClockMHz != w.clock {
				t.Errorf("got %+v, want %+v", c, w)
			}
			if w.err == "" && c.Err != "" || !strings.Contains(c.Err, w.err) {
				t.Errorf("Err = %q, want it to contain %q", c.Err, w.err)
			}
			if c.Dir != filepath.Join(dir, w.name) {
				t.Errorf("Dir = %q", c.Dir)
			}
		})
	}

	if _, err := simconfig.Load(filepath.Join(dir, "nope")); err == nil {
		t.Error("Load of a missing dir: no error")
	}
}

// TestLoadPaired reads configs laid out as an Accel-Sim checkout keeps
// them: gpgpusim.config and its side files under gpgpu-sim's tested-cfgs,
// trace.config under Accel-Sim's.
func TestLoadPaired(t *testing.T) {
	root := t.TempDir()
	gpgpu, trace := filepath.Join(root, "gpgpu-sim", "tested-cfgs"), filepath.Join(root, "accel-sim", "tested-cfgs")
	all := simconfigtest.Write(t, t.TempDir())
	for _, name := range []string{simconfigtest.TitanX, simconfigtest.H100} {
		for _, f := range []string{"gpgpusim.config", "config_pascal_islip.icnt"} {
			if data, err := os.ReadFile(filepath.Join(all, name, f)); err == nil {
				simconfigtest.WriteFile(t, filepath.Join(gpgpu, name, f), string(data))
			}
		}
		data, err := os.ReadFile(filepath.Join(all, name, "trace.config"))
		if err != nil {
			t.Fatal(err)
		}
		simconfigtest.WriteFile(t, filepath.Join(trace, name, "trace.config"), string(data))
	}
	simconfigtest.WriteFile(t, filepath.Join(gpgpu, "SM2_GTX480", "gpgpusim.config"), "-gpgpu_compute_capability_major 2\n")
	simconfigtest.WriteFile(t, filepath.Join(trace, "SM_ORPHAN", "trace.config"), traceCfg)

	cfgs, err := simconfig.LoadPaired(gpgpu, trace)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cfgs {
		got = append(got, fmt.Sprintf("%s %s %v %q", c.Name, c.ComputeCapability, c.CoreClockMHz, c.Err))
	}
	// SM2_GTX480 has no trace.config half: listed, with why it cannot run.
	want := []string{
		fmt.Sprintf("SM2_GTX480  0 %q", filepath.Join(trace, "SM2_GTX480", "trace.config")+": missing: this config has no trace-driven half (trace.config), so the trace-driven simulator cannot run it"),
		`SM6_TITANX 6.1 1417 ""`,
		`SM90_H100 9.0 1755 ""`,
		fmt.Sprintf("SM_ORPHAN  0 %q", filepath.Join(gpgpu, "SM_ORPHAN")+": no such directory for this config's gpgpusim.config"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	titan := cfgs[1]
	if simconfig.GPGPUSimPath(titan) != filepath.Join(gpgpu, "SM6_TITANX", "gpgpusim.config") || simconfig.TracePath(titan) != filepath.Join(trace, "SM6_TITANX", "trace.config") {
		t.Errorf("paths %s %s", simconfig.GPGPUSimPath(titan), simconfig.TracePath(titan))
	}
	if _, err := simconfig.LoadPaired(gpgpu, filepath.Join(root, "nope")); err == nil {
		t.Error("LoadPaired of a missing dir: no error")
	}
}

func TestCrossArchitecture(t *testing.T) {
	titan := cascade.SimConfig{Name: "SM6_TITANX", ComputeCapability: "6.1"}
	for arch, want := range map[string]bool{"sm_61": false, "sm_90": true, "": true, "sm_x": false} {
		if got := simconfig.CrossArchitecture(titan, arch); got != want {
			t.Errorf("CrossArchitecture(%q) = %v, want %v", arch, got, want)
		}
	}
	if simconfig.CrossArchitecture(cascade.SimConfig{}, "sm_90") {
		t.Error("a config of unknown capability is not cross-architecture")
	}
}

func TestLoadOne(t *testing.T) {
	dir := simconfigtest.Write(t, t.TempDir(), simconfigtest.H100)
	c := simconfig.LoadOne(filepath.Join(dir, simconfigtest.H100))
	if c.Name != "SM90_H100" || c.ComputeCapability != "9.0" || c.CoreClockMHz != 1755 || !c.Usable() {
		t.Fatalf("got %+v", c)
	}
	args := simconfig.SimulatorArgs(c)
	if len(args) != 4 || args[1] != filepath.Join(dir, "SM90_H100", "gpgpusim.config") || args[3] != filepath.Join(dir, "SM90_H100", "trace.config") {
		t.Errorf("SimulatorArgs = %q", args)
	}
	for _, p := range []string{args[1], args[3]} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

func TestArchCapability(t *testing.T) {
	tests := []struct {
		arch, want string
		ok         bool
	}{
		{"sm_90", "9.0", true},
		{"sm_86", "8.6", true},
		{"sm_100", "10.0", true},
		{"sm_120", "12.0", true},
		{"sm_90a", "9.0", true},
		{"SM_70", "7.0", true},
		{"compute_75", "7.5", true},
		{"9.0", "9.0", true},
		{"", "9.0", true},
		{"sm_9", "", false},
		{"hopper", "", false},
		{"sm_xx", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.arch, func(t *testing.T) {
			got, ok := simconfig.ArchCapability(tt.arch)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ArchCapability(%q) = %q, %v; want %q, %v", tt.arch, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCompatibleAndDefault(t *testing.T) {
	cfgs := []cascade.SimConfig{
		{Name: "A_BROKEN_H100", ComputeCapability: "9.0", Err: "trace.config: missing"},
		{Name: "SM7_QV100", ComputeCapability: "7.0"},
		{Name: "SM86_RTX3070", ComputeCapability: "8.6"},
		{Name: "SM90_H100", ComputeCapability: "9.0"},
		{Name: "SM90_H200", ComputeCapability: "9.0"},
		{Name: "SM100_B200", ComputeCapability: "10.0"},
	}
	tests := []struct {
		name, arch, suggested string
		compatible            []string
		def                   string // "" for none
	}{
		{"suggested compatible", "sm_90", "SM90_H200", []string{"SM90_H100", "SM90_H200"}, "SM90_H200"},
		{"no suggestion", "sm_90", "", []string{"SM90_H100", "SM90_H200"}, "SM90_H100"},
		// QA: metadata.json's suggestion is what the user asked for,
		// another architecture or not (a cross-architecture run).
		{"suggested incompatible", "sm_90", "SM86_RTX3070", []string{"SM90_H100", "SM90_H200"}, "SM86_RTX3070"},
		{"suggested unknown", "sm_86", "SM86_RTX3080", []string{"SM86_RTX3070"}, "SM86_RTX3070"},
		{"suggested broken", "sm_90", "A_BROKEN_H100", []string{"SM90_H100", "SM90_H200"}, "SM90_H100"},
		{"suggested other case", "sm_90", "sm90_h200", []string{"SM90_H100", "SM90_H200"}, "SM90_H200"},
		{"arch missing means sm_90", "", "", []string{"SM90_H100", "SM90_H200"}, "SM90_H100"},
		{"three digit arch", "sm_100", "", []string{"SM100_B200"}, "SM100_B200"},
		{"nothing compatible, a suggestion", "sm_89", "SM90_H100", nil, "SM90_H100"},
		{"nothing compatible", "sm_89", "", nil, ""},
		{"garbage arch", "hopper", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, c := range simconfig.Compatible(cfgs, tt.arch) {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tt.compatible) {
				t.Errorf("Compatible = %q, want %q", names, tt.compatible)
			}
			def, ok := simconfig.Default(cfgs, tt.arch, tt.suggested)
			if ok != (tt.def != "") || def.Name != tt.def {
				t.Errorf("Default = %q, %v; want %q", def.Name, ok, tt.def)
			}
		})
	}
	if c, ok := simconfig.Find(cfgs, "SM7_QV100"); !ok || c.ComputeCapability != "7.0" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
}
