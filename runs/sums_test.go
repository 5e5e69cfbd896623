package runs_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/testkit"
)

// TestConfigSum: a config's sum is stable, covers its side files, and
// changes when any of its files does; the log's name is not a config file.
func TestConfigSum(t *testing.T) {
	dir := simconfigtest.Write(t, t.TempDir(), simconfigtest.H100)
	sum := func() string {
		t.Helper()
		cfgs, err := simconfig.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := simconfig.Find(cfgs, simconfigtest.H100)
		if !ok {
			t.Fatal("no config")
		}
		s, err := runs.ConfigSum(c, "accel-sim.log")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := sum()
	if len(first) != 64 || sum() != first {
		t.Fatalf("sum %q, then %q: want the same 64 hex digits", first, sum())
	}
	folder := filepath.Join(dir, simconfigtest.H100)
	simconfigtest.WriteFile(t, filepath.Join(folder, "accel-sim.log"), "not a config file")
	if s := sum(); s != first {
		t.Errorf("a reserved name changed the sum")
	}
	simconfigtest.WriteFile(t, filepath.Join(folder, "config_hopper_islip.icnt"), "// side file\n")
	side := sum()
	if side == first {
		t.Errorf("a new side file left the sum as it was")
	}
	f, err := os.OpenFile(filepath.Join(folder, simconfig.GPGPUSimFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("-gpgpu_n_clusters 1\n")
	f.Close()
	if s := sum(); s == side || s == first {
		t.Errorf("an edited gpgpusim.config left the sum as it was")
	}
}

// TestTraceSum: the quickstart trace's fingerprint is stable, and changes
// with the kernel list's content and with a kernel file's size or
// modification time.
func TestTraceSum(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "kernelslist.g")
	sum := func() string {
		t.Helper()
		s, err := runs.TraceSum(list)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := sum()
	if len(first) != 64 || sum() != first {
		t.Fatalf("sum %q, then %q: want the same 64 hex digits", first, sum())
	}
	kernel := filepath.Join(dir, "kernel-1-ctx_0x55d2c3a1e4f0.traceg")
	if _, err := os.Stat(kernel); err != nil {
		t.Fatalf("the quickstart has no kernel 1 file: %v", err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(kernel, later, later); err != nil {
		t.Fatal(err)
	}
	touched := sum()
	if touched == first {
		t.Errorf("a kernel file's new modification time left the sum as it was")
	}
	b, _ := os.ReadFile(list)
	if err := os.WriteFile(list, append(b, "\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := sum(); s == touched {
		t.Errorf("an edited kernel list left the sum as it was")
	}
}

// TestSimulatorSum: the simulator's sum is the binary's SHA-256, looked
// up in PATH when a name, and follows its content and the command's
// further words.
func TestSimulatorSum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accel-sim.out")
	if err := os.WriteFile(path, []byte("abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if s, err := runs.SimulatorSum([]string{path}); err != nil || s != abc {
		t.Fatalf("SimulatorSum = %q, %v; want %s", s, err, abc)
	}
	t.Setenv("PATH", filepath.Dir(path))
	if s, err := runs.SimulatorSum([]string{"accel-sim.out"}); err != nil || s != abc {
		t.Fatalf("SimulatorSum by name = %q, %v; want %s", s, err, abc)
	}
	withArgs, err := runs.SimulatorSum([]string{path, "-x"})
	if err != nil || withArgs == abc {
		t.Fatalf("SimulatorSum with an argument = %q, %v; want another sum", withArgs, err)
	}
	if other, err := runs.SimulatorSum([]string{path, "-y"}); err != nil || other == withArgs {
		t.Fatalf("SimulatorSum with another argument = %q, %v; want another sum", other, err)
	}
	if err := os.WriteFile(path, []byte("abcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := runs.SimulatorSum([]string{path}); err != nil || s == abc {
		t.Fatalf("SimulatorSum after a rebuild = %q, %v; want another sum", s, err)
	}
}
