package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// The variables that point tests at the real Accel-Sim and at real traces
// (.ci/run sets both, to ../shared/accelsim and ../shared/traces).
const (
	AccelSimEnv = "CASCADE_TEST_ACCELSIM_DIR"
	TracesEnv   = "CASCADE_TEST_TRACES_DIR"
)

// RealAccelSim returns the Accel-Sim checkout named by
// CASCADE_TEST_ACCELSIM_DIR, with its simulator built. Without the
// variable the test is skipped, except in CI (CI set), where a missing
// simulator fails it: CI must run the real thing. It skips under -short.
func RealAccelSim(t testing.TB) string {
	t.Helper()
	return realDir(t, AccelSimEnv, "gpu-simulator/bin/release/accel-sim.out")
}

// RealTrace returns the real trace directory name (e.g. "vecadd-sm61")
// under CASCADE_TEST_TRACES_DIR, as RealAccelSim does for the simulator.
func RealTrace(t testing.TB, name string) string {
	t.Helper()
	return realDir(t, TracesEnv, name+"/metadata.json") + "/" + name
}

func realDir(t testing.TB, env, inside string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("full suite: runs the real Accel-Sim")
	}
	dir := os.Getenv(env)
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: CI runs the real Accel-Sim (.ci/run sets it)", env)
		}
		t.Skipf("%s is not set: the real Accel-Sim's tests skip", env)
	}
	// A relative path is the repository's, as .ci/run sets it: tests run
	// in their package's directory.
	abs := dir
	if !filepath.IsAbs(dir) {
		abs = filepath.Join(ModuleRoot(), dir)
	}
	if _, err := os.Stat(filepath.Join(abs, inside)); err != nil {
		t.Fatalf("%s=%s: %v", env, dir, err)
	}
	return abs
}
