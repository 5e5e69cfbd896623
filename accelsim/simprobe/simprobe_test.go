package simprobe_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// realConfig links the real checkout's config folder name into a new
// directory, as a run's directory holds it, and returns the directory.
func realConfig(t *testing.T, checkout, name string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(checkout, "gpu-simulator/gpgpu-sim/configs/tested-cfgs", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(checkout, "gpu-simulator/configs/tested-cfgs", name, "trace.config"), filepath.Join(dir, "trace.config")); err != nil {
		t.Fatal(err)
	}
	return dir
}

var configArgs = []string{"-config", "gpgpusim.config", "-config", "trace.config"}

func realSimulator(checkout string) simprobe.Simulator {
	return simprobe.Simulator{
		Command: []string{filepath.Join(checkout, "gpu-simulator/bin/release/accel-sim.out")},
		Env:     []string{"LD_LIBRARY_PATH=" + filepath.Join(checkout, "gpu-simulator/gpgpu-sim/lib/gcc-12.2.0/cuda-11080/release")},
	}
}

// TestRealSimulator: the real Accel-Sim (dev) accepts SM6_TITANX, refuses
// SM3_KEPLER_TITAN's -smem_latency, and decodes binary versions 35, 60,
// 61, 70, 75, 80 and 86 only: not 90, so it cannot simulate an H100
// trace, whatever the config.
func TestRealSimulator(t *testing.T) {
	checkout := testkit.RealAccelSim(t)
	sim := realSimulator(checkout)
	ctx := context.Background()
	titan := realConfig(t, checkout, "SM6_TITANX")
	if refusal, err := sim.CheckConfig(ctx, titan, configArgs); err != nil || refusal != "" {
		t.Errorf("SM6_TITANX: %q, %v", refusal, err)
	}
	kepler := realConfig(t, checkout, "SM3_KEPLER_TITAN")
	if refusal, err := sim.CheckConfig(ctx, kepler, configArgs); err != nil || !strings.Contains(refusal, "Unknown Option: '-smem_latency'") {
		t.Errorf("SM3_KEPLER_TITAN: %q, %v", refusal, err)
	}
	got, err := sim.BinaryVersions(ctx, titan, configArgs, simprobe.Candidates)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{35, 60, 61, 70, 75, 80, 86}; !slices.Equal(got, want) {
		t.Errorf("binary versions %v, want %v", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(titan, "cascade-probe*")); len(left) > 0 {
		t.Errorf("probe files left: %v", left)
	}
}

// TestSimulatorMissing: a simulator that is not there is an error, not a
// refused config.
func TestSimulatorMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("full suite: starts processes")
	}
	sim := simprobe.Simulator{Command: []string{filepath.Join(t.TempDir(), "accel-sim.out")}}
	if r, err := sim.CheckConfig(context.Background(), t.TempDir(), configArgs); err == nil {
		t.Errorf("no error, refusal %q", r)
	}
}

// TestStandIn: the stand-in simulator told which binary versions it
// decodes (FAKESIM_BINARY_VERSIONS) answers the probe as the real one
// does, and refuses a config with -smem_latency. What a test chose for
// its runs (a crash, steps on a pipe) is not the probe's.
func TestStandIn(t *testing.T) {
	sim := simprobe.Simulator{Command: []string{fakesim.Build(t)}, Env: []string{fakesim.EnvBinaryVersions + "=61,70,86",
		fakesim.EnvMode + "=" + fakesim.ModeCrash, fakesim.EnvStep + "=" + filepath.Join(t.TempDir(), "no-such-pipe")}}
	dir := t.TempDir()
	for name, text := range map[string]string{"gpgpusim.config": "-gpgpu_n_clusters 1\n", "trace.config": "-trace_opcode_latency_initiation_int 4,2\n",
		"kepler.config": "-smem_latency 3\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if refusal, err := sim.CheckConfig(ctx, dir, configArgs); err != nil || refusal != "" {
		t.Errorf("config: %q, %v", refusal, err)
	}
	kepler := []string{"-config", "kepler.config", "-config", "trace.config"}
	if refusal, err := sim.CheckConfig(ctx, dir, kepler); err != nil || !strings.Contains(refusal, "Unknown Option: '-smem_latency'") {
		t.Errorf("kepler config: %q, %v", refusal, err)
	}
	got, err := sim.BinaryVersions(ctx, dir, configArgs, []int{35, 61, 70, 86, 90})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{61, 70, 86}; !slices.Equal(got, want) {
		t.Errorf("binary versions %v, want %v", got, want)
	}
}
