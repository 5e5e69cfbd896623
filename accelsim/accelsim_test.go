package accelsim_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/accelsimtest"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

func TestFind(t *testing.T) {
	for _, tt := range []struct{ version, format, why string }{
		{fakesim.Version1, accelsim.FormatTraceg, "reads .traceg and .traceg.xz only (Accel-Sim 1.x)"},
		{fakesim.Version2, accelsim.FormatTracez, "reads .tracez (Accel-Sim 2.0)"},
	} {
		t.Run("version "+tt.version, func(t *testing.T) {
			dir := accelsimtest.Write(t, t.TempDir(), tt.version)
			c, err := accelsim.Find(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Missing) != 0 {
				t.Errorf("missing: %q", c.Missing)
			}
			// The samples and SM3_KEPLER_TITAN; SM2_GTX480 has no trace.config.
			want := len(simconfigtest.Names()) + 1
			if c.Binary != filepath.Join(dir, "gpu-simulator/bin/release/accel-sim.out") || c.Configs != want ||
				c.LibDir != filepath.Join(dir, accelsimtest.LibDir) || c.Format != tt.format || !strings.HasSuffix(c.FormatWhy, tt.why) {
				t.Errorf("found %+v", c)
			}
			report := strings.Join(c.Report(), "\n")
			for _, s := range []string{"simulator " + c.Binary, "5 tested configs", "library path " + c.LibDir, "reads " + tt.format} {
				if !strings.Contains(report, s) {
					t.Errorf("report lacks %q:\n%s", s, report)
				}
			}
		})
	}
}

func TestFindMissing(t *testing.T) {
	dir := t.TempDir()
	c, err := accelsim.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Join(c.Report(), "\n")
	for _, s := range []string{
		"missing: no simulator at gpu-simulator/bin/release/accel-sim.out",
		"missing: no gpu-simulator/gpgpu-sim/configs/tested-cfgs",
		"missing: no gpu-simulator/configs/tested-cfgs",
		"missing: no libcudart.so under gpu-simulator/gpgpu-sim/lib",
		"cannot tell which trace format",
	} {
		if !strings.Contains(report, s) {
			t.Errorf("report lacks %q:\n%s", s, report)
		}
	}
	if _, err := accelsim.Find(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing checkout: no error")
	}
}

// TestFormatFromBinary: without the trace reader's sources, the binary
// tells, whatever its size.
func TestFormatFromBinary(t *testing.T) {
	for name, content := range map[string]string{
		accelsim.FormatTracez: strings.Repeat("\x00", 1<<20-3) + ".tracez" + strings.Repeat("x", 100), // across a read boundary
		accelsim.FormatTraceg: strings.Repeat("\x00", 3<<20) + ".traceg Unsupported file type!",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, filepath.FromSlash(accelsim.BinaryPath))
			simconfigtest.WriteFile(t, bin, content)
			os.Chmod(bin, 0o755)
			c, err := accelsim.Find(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Format != name || !strings.HasPrefix(c.FormatWhy, "accel-sim.out") {
				t.Fatalf("format %q (%s)", c.Format, c.FormatWhy)
			}
		})
	}
}

// TestLibPrefersReleaseThenNewest: with several builds, the release one,
// and among those the newest.
func TestLibPrefersReleaseThenNewest(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, filepath.FromSlash(accelsim.LibPath))
	old := filepath.Join(lib, "gcc-7.5.0", "cuda-11000", "release")
	newer := filepath.Join(lib, "gcc-9.4.0", "cuda-11080", "release")
	debug := filepath.Join(lib, "gcc-11.4.0", "cuda-12020", "debug")
	for i, d := range []string{old, newer, debug} {
		simconfigtest.WriteFile(t, filepath.Join(d, "libcudart.so.11.0"), "")
		at := time.Now().Add(time.Duration(i-3) * time.Hour)
		os.Chtimes(filepath.Join(d, "libcudart.so.11.0"), at, at)
	}
	c, _ := accelsim.Find(dir)
	if c.LibDir != newer {
		t.Fatalf("library path %s, want %s", c.LibDir, newer)
	}
	if slices.ContainsFunc(c.Missing, func(s string) bool { return strings.Contains(s, "libcudart") }) {
		t.Errorf("missing: %q", c.Missing)
	}
}
