package simconfig

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzLoad: a tested config's two files never panic the reader; a config
// that loads has a "major.minor" capability and a finite, non-negative core
// clock; one that does not says why, naming the file (and the option) at
// fault.
func FuzzLoad(f *testing.F) {
	f.Add("-gpgpu_compute_capability_major 9\n-gpgpu_compute_capability_minor 0\n-gpgpu_clock_domains 1755.0:1755.0:1755.0:2619.0\n", "-trace_opcode_latency_initiation_int 2,2\n")
	f.Add("# comment -gpgpu_compute_capability_major 1\n-gpgpu_compute_capability_major \"8\"\n-gpgpu_compute_capability_minor 6 # x\n", "-gpgpu_compute_capability_minor 7\n-gpgpu_clock_domains \"1132.0 : 1132.0\"\n")
	f.Add("-gpgpu_compute_capability_major -1\n-gpgpu_compute_capability_minor x\n", "")
	f.Add("-gpgpu_compute_capability_major 7\n-gpgpu_compute_capability_minor 0\n-gpgpu_clock_domains 0:1\n", "-gpgpu_clock_domains -5")
	f.Add("-gpgpu_flag -gpgpu_compute_capability_major 7 -gpgpu_compute_capability_minor \"0", "-gpgpu_clock_domains 1e400")
	capability := regexp.MustCompile(`^\d+\.\d+$`)
	fileErr := regexp.MustCompile(`^(gpgpusim|trace)\.config: `)
	f.Fuzz(func(t *testing.T, gpgpu, trace string) {
		dir := t.TempDir()
		if os.WriteFile(filepath.Join(dir, GPGPUSimFile), []byte(gpgpu), 0o644) != nil || os.WriteFile(filepath.Join(dir, TraceFile), []byte(trace), 0o644) != nil {
			t.Fatal("write config")
		}
		c := LoadOne(dir)
		if c.ComputeCapability != "" && !capability.MatchString(c.ComputeCapability) {
			t.Fatalf("capability %q", c.ComputeCapability)
		}
		if math.IsNaN(c.CoreClockMHz) || math.IsInf(c.CoreClockMHz, 0) || c.CoreClockMHz < 0 {
			t.Fatalf("core clock %v", c.CoreClockMHz)
		}
		if c.Err == "" {
			if c.ComputeCapability == "" {
				t.Fatal("usable without a capability")
			}
			return
		}
		if !fileErr.MatchString(c.Err) || !strings.Contains(c.Err, "-gpgpu_") {
			t.Fatalf("reason %q names no file and option", c.Err)
		}
	})
}

// FuzzArchCapability: a trace architecture reads as "major.minor" without
// leading zeros, and that capability reads as itself.
func FuzzArchCapability(f *testing.F) {
	for _, s := range []string{"sm_90", "SM_86 ", "compute_70", "sm_90a", "sm_100f", "9.0", "09.00", "sm90", "", "sm_", "sm_1", "x.y"} {
		f.Add(s)
	}
	want := regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)$`)
	f.Fuzz(func(t *testing.T, arch string) {
		c, ok := ArchCapability(arch)
		if !ok {
			return
		}
		if !want.MatchString(c) {
			t.Fatalf("%q gives %q", arch, c)
		}
		if again, ok := ArchCapability(c); !ok || again != c {
			t.Fatalf("%q gives %q, which gives %q, %v", arch, c, again, ok)
		}
	})
}
