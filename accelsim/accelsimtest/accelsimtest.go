package accelsimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// LibDir is where [Write] puts libcudart.so, relative to the checkout, as
// GPGPU-Sim's build of CUDA 11.8 with gcc 9.4.0 does.
const LibDir = "gpu-simulator/gpgpu-sim/lib/gcc-9.4.0/cuda-11080/release"

// Kepler is a config as Accel-Sim ships SM3_KEPLER_TITAN: GPGPU-Sim's dev
// branch does not know its -smem_latency option.
const Kepler = "SM3_KEPLER_TITAN"

// The trace readers' sources, in brief: 1.x opens .xz and .traceg, 2.0
// .tracez too (see accelsim.readFormat).
var parserSource = map[string]string{
	fakesim.Version1: `// Stand-in for Accel-Sim 1.x's trace reader: kernel traces open by extension.
void PipeReader::OpenFile(const std::string &path) {
  if (hasEnding(path, ".xz")) command = "xz -dc " + path;
  else if (hasEnding(path, ".traceg")) command = "cat " + path;
  else throw std::runtime_error("Unsupported file type!");
}
`,
	fakesim.Version2: `// Stand-in for Accel-Sim 2.0's trace reader: kernel traces open by extension.
void PipeReader::OpenFile(const std::string &path) {
  if (hasEnding(path, ".tracez")) reader = open_tracez(path);
  else if (hasEnding(path, ".xz")) command = "xz -dc " + path;
  else if (hasEnding(path, ".traceg")) command = "cat " + path;
  else throw std::runtime_error("Unsupported file type!");
}
`,
}

// Write lays out a checkout in dir whose simulator behaves as Accel-Sim
// version (fakesim.Version1 or Version2) and needs libcudart.so on
// LD_LIBRARY_PATH, and returns dir.
func Write(tb testing.TB, dir, version string) string {
	tb.Helper()
	sim := fakesim.Build(tb)
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	script := fmt.Sprintf("#!/bin/sh\nexport %s=%s %s=1\nexec %q \"$@\"\n", fakesim.EnvVersion, version, fakesim.EnvNeedsLib, sim)
	simconfigtest.WriteFile(tb, path(accelsim.BinaryPath), script)
	if err := os.Chmod(path(accelsim.BinaryPath), 0o755); err != nil {
		tb.Fatal(err)
	}
	all := simconfigtest.Write(tb, tb.TempDir())
	for _, name := range simconfigtest.Names() {
		files, err := os.ReadDir(filepath.Join(all, name))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(all, name, f.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			to := accelsim.GPGPUSimConfigsPath
			if f.Name() == "trace.config" {
				to = accelsim.TraceConfigsPath
			}
			simconfigtest.WriteFile(tb, path(to+"/"+name+"/"+f.Name()), string(data))
		}
	}
	simconfigtest.WriteFile(tb, path(accelsim.GPGPUSimConfigsPath+"/"+Kepler+"/gpgpusim.config"),
		"# Kepler TITAN, as shipped\n-gpgpu_compute_capability_major 3\n-gpgpu_compute_capability_minor 5\n-gpgpu_clock_domains 837.0:837.0:837.0:1502.0\n-smem_latency 64\n")
	simconfigtest.WriteFile(tb, path(accelsim.TraceConfigsPath+"/"+Kepler+"/trace.config"), "-trace_opcode_latency_initiation_int 4,1\n")
	// GPGPU-Sim's own configs that Accel-Sim has no trace.config for.
	simconfigtest.WriteFile(tb, path(accelsim.GPGPUSimConfigsPath+"/SM2_GTX480/gpgpusim.config"), "-gpgpu_compute_capability_major 2\n")
	simconfigtest.WriteFile(tb, path(LibDir+"/libcudart.so"), "")
	simconfigtest.WriteFile(tb, path(accelsim.TraceParserPath+"/trace_parser.cc"), parserSource[version])
	return dir
}
