// Package fakesim is a stand-in for Accel-Sim's accel-sim.out that tests run
// as a real program: [Build] compiles cmd/fakesim once per test process.
//
// The program takes Accel-Sim's command line,
//
//	accel-sim.out -trace <kernelslist.g> -config <gpgpusim.config> -config <trace.config>
//
// reads the kernel list the way Accel-Sim does (kernel lines relative to the
// list's directory: any line starting with "kernel", so a segment's
// warming kernel, kernelwarm.traceg from package accelsim/l2warm, is
// simulated as the real simulator simulates it), opens every trace it
// names, and prints Accel-Sim's log:
// "launching memcpy command", "Processing kernel <path>", "Header info
// loaded", "launching kernel name: <name> uid: <i> cuda_stream_id: <s>", a
// statistics block per kernel (kernel_name, kernel_launch_uid,
// gpu_sim_cycle, gpu_sim_insn, gpu_ipc, gpu_tot_sim_cycle, and every
// counter of accelsim/simstats's table, each line in the shape the real
// simulator prints it: TestFormatMatchesTheRealLog holds them against logs
// of the real accel-sim.out), gpgpu_simulation_time and the rates, and at
// the end "GPGPU-Sim: *** exit detected ***".
//
// Numbers are deterministic: the i-th kernel line of the list (1-based) whose
// trace file is size bytes runs [Cycles](i, size) = 1000*i + size cycles and
// [Instructions](i, size) = 3*size + 7*i instructions, with launch uid i and
// the kernel name from the trace header's "-kernel name =" line (the file
// name when the header cannot be read, as for .xz files). With
// FAKESIM_NUMBER_BY=id, i is the kernel id of the trace file's name
// instead, so a kernel runs the same cycles in any subset of the list.
//
// Options given after the config files override theirs, as in
// GPGPU-Sim: one that neither file sets and that is not among
// [KnownOptions] prints "GPGPU-Sim ** ERROR: Unknown Option: '<option>'"
// and exits 1, and a value that is not a whole number for an option the
// files give a whole number prints "GPGPU-Sim ** ERROR: Cannot parse
// value '<value>' for option '<option>'." and exits 1, in the order given
// (the first refusal only). A command line's -gpgpu_n_clusters N scales
// every kernel's cycles by the files' clusters over N.
//
// Like Accel-Sim (formats.md §6), a config file it cannot open makes it exit
// 1; an option it does not know ([UnknownOptions], as GPGPU-Sim's dev branch
// does not know the shipped SM3_KEPLER_TITAN's -smem_latency) prints
// "GPGPU-Sim ** ERROR: Unknown Option: '<option>'" and exits 1; with
// "-network_mode 1" the -inter_config_file is opened relative to the working
// directory, and when it is not there the program prints "Could not open
// configuration file <name>" and exits 255; a kernel list it cannot open
// prints "Unable to open file: <path>" and exits 1; a missing .traceg/.tracez
// trace prints "cat: <path>: No such file or directory" on stderr, then
// "unsupported binary version: 0", and exits 0; a .traceg whose last line has
// no newline fails trace_parser.cc's assertion and exits 134; and a trace of
// a file type it does not read (.tracez for version 1, raw .trace always)
// prints "terminate called after throwing an instance of
// 'std::runtime_error'" and "  what():  Unsupported file type!" and dies of
// SIGABRT.
//
// FAKESIM_ACCELSIM_VERSION is 2 (Accel-Sim 2.0, the default: .traceg,
// .traceg.xz and .tracez) or 1 (the public dev branch: .traceg and .traceg.xz
// only). With FAKESIM_NEEDS_LIB set the program, like the real one, cannot
// start unless a directory of LD_LIBRARY_PATH holds libcudart.so.
//
// FAKESIM_MODE chooses a behaviour; the failing kernel is the middle one,
// k = (n+1)/2 of n kernels, so kernels 1..k-1 complete first:
//
//   - ok (default): every kernel, then exit detected, exit 0.
//   - crash: at kernel k, an assertion message on stderr and exit 134.
//   - segfault: at kernel k, a progress line, then death by SIGSEGV with
//     nothing more printed, as the real simulator dies of a bad pointer.
//   - deadlock: at kernel k, GPGPU-Sim's "deadlock detected" report and exit
//     134 (the real simulator aborts).
//   - maxcycles: kernel k prints partial statistics (Cycles/2, Instructions/2),
//     then the "break due to reaching the maximum cycles" line, exit
//     detected, exit 0.
//   - unsupported: at kernel 1, "unsupported binary version: 20", exit 0.
//   - slow: like ok, sleeping FAKESIM_DELAY (a Go duration, default 1s)
//     before each kernel's statistics.
//   - ignoreterm: ignores SIGTERM, prints "fakesim: ignoring SIGTERM", runs
//     like slow, then keeps running until killed.
//   - noexit: like ok but ends with exit 0 and no exit-detected line.
//   - memory: like ok, but before kernel k's statistics it takes
//     FAKESIM_MEMORY_MB megabytes (default 256), touching every page, and
//     holds them for FAKESIM_DELAY: a job with less memory allowed is
//     killed for it. Under an address space limit (ulimit -v) they do not
//     fit in, the program instead fails as C++'s new does: "terminate
//     called after throwing an instance of 'std::bad_alloc'" and "  what():
//     std::bad_alloc" on stderr, and death by SIGABRT.
//
// FAKESIM_BINARY_VERSIONS, in any mode, lists the binary versions the
// program decodes (e.g. "35,60,61,70,75,80,86", as Accel-Sim's dev branch);
// a kernel of another prints "unsupported binary version: N" and exits 0.
// Without it every version is decoded.
//
// Run by package simprobe (CASCADE_SIM_PROBE set), the program ignores
// FAKESIM_MODE, FAKESIM_STEP and FAKESIM_PROGRESS_BYTES: a probe is no run.
//
// FAKESIM_STEP, in any mode, names a named pipe (mkfifo): before each
// kernel's statistics the program waits to read one line from it, so a
// test holds a run at a known kernel for as long as it needs, on a machine
// of any speed, and lets it on one kernel at a time. With
// FAKESIM_STEP_LAUNCH set too, it also waits after each kernel's
// statistics, before the next kernel's launch (its memcpys, then its
// "Processing kernel" line): a test sees a kernel's statistics read
// (the run's progress) apart from the launch that makes its result final.
//
// FAKESIM_PROGRESS_BYTES, in any mode, makes the program print about that
// many bytes of GPGPU-Sim's periodic progress lines ("GPGPU-Sim uArch:
// cycles simulated: …") before each kernel's statistics, as a long
// simulation logs: a test fills a disk with the log.
package fakesim

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/procdir"
)

// Modes, the values of FAKESIM_MODE.
const (
	ModeOK          = "ok"
	ModeCrash       = "crash"
	ModeDeadlock    = "deadlock"
	ModeMaxCycles   = "maxcycles"
	ModeUnsupported = "unsupported"
	ModeSlow        = "slow"
	ModeIgnoreTerm  = "ignoreterm"
	ModeNoExit      = "noexit"
	ModeMemory      = "memory"
	ModeSegfault    = "segfault"
)

// Environment variables the program reads.
const (
	EnvMode     = "FAKESIM_MODE"
	EnvDelay    = "FAKESIM_DELAY"
	EnvVersion  = "FAKESIM_ACCELSIM_VERSION"
	EnvNeedsLib = "FAKESIM_NEEDS_LIB"
	EnvStep     = "FAKESIM_STEP"
	// EnvStepLaunch: see FAKESIM_STEP.
	EnvStepLaunch = "FAKESIM_STEP_LAUNCH"
	EnvProgress   = "FAKESIM_PROGRESS_BYTES"
	EnvMemoryMB   = "FAKESIM_MEMORY_MB"
	// EnvNumberBy set to "id" numbers each kernel, for [Cycles] and
	// [Instructions] only, by the kernel id of its trace file's name
	// (kernel-<id>...) instead of its position in the list: a kernel then
	// runs the same cycles in a list of any subset, as a split run's
	// segments simulate it.
	EnvNumberBy = "FAKESIM_NUMBER_BY"
	// EnvBinaryVersions, when set, lists (comma-separated) the binary
	// versions the program decodes, as the real simulator's ISA tables
	// do: a kernel whose header's -binary version is not listed prints
	// "unsupported binary version: N" and exits 0.
	EnvBinaryVersions = "FAKESIM_BINARY_VERSIONS"
)

// Accel-Sim versions, the values of FAKESIM_ACCELSIM_VERSION.
const (
	Version1 = "1" // reads .traceg and .traceg.xz
	Version2 = "2" // reads .tracez too
)

// Libcudart is the library the program needs on LD_LIBRARY_PATH when
// FAKESIM_NEEDS_LIB is set: GPGPU-Sim's own CUDA runtime.
const Libcudart = "libcudart.so"

// UnknownOptions are the config options the program rejects, as GPGPU-Sim's
// dev branch rejects an option it does not know.
var UnknownOptions = map[string]bool{"-smem_latency": true}

// KnownOptions are options the program takes on its command line though
// no config file sets them, as GPGPU-Sim knows options the tested configs
// leave at their defaults (AccelWattch's, the instruction limit, ...).
// Any other option neither config file sets is unknown to it.
var KnownOptions = map[string]bool{
	"-power_simulation_enabled": true, "-power_simulation_mode": true, "-accelwattch_xml_file": true,
	"-gpgpu_max_insn": true, "-gpgpu_concurrent_kernel_sm": true, "-gpgpu_flush_l1_cache": true,
	"-visualizer_enabled": true, "-gpgpu_n_clusters": true, "-gpgpu_clock_domains": true,
}

// ExitAbort is the status the program exits with in the crash and deadlock
// modes: what a shell reports for a process killed by SIGABRT.
const ExitAbort = 134

// Cycles is the gpu_sim_cycle reported for the i-th kernel (1-based, in list
// order) whose trace file is size bytes.
func Cycles(i int, size int64) int64 { return 1000*int64(i) + size }

// Instructions is the gpu_sim_insn reported for the i-th kernel whose trace
// file is size bytes.
func Instructions(i int, size int64) int64 { return 3*size + 7*int64(i) }

// Power is the average power, in watts, the program reports for the i-th
// kernel under -power_simulation_enabled 1 (given in a config file or on
// the command line), and its breakdown by accelwattch.Components: 50 + i
// W, of which DRAMP is i W, STATICP 10 W and CONSTP the rest (40 W). It
// writes accelwattch_power_report.log in its working directory, as the
// real simulator does, a block per kernel in the real report's shape.
func Power(i int) (avg float64, breakdown []float64) {
	breakdown = make([]float64, len(accelwattch.Components))
	for j, c := range accelwattch.Components {
		switch c {
		case "DRAMP":
			breakdown[j] = float64(i)
		case "STATICP":
			breakdown[j] = 10
		case "CONSTP":
			breakdown[j] = 40
		}
	}
	return 50 + float64(i), breakdown
}

// FailingKernel is the 1-based index of the kernel at which the crash,
// deadlock and maxcycles modes fail, out of n kernels.
func FailingKernel(n int) int { return (n + 1) / 2 }

var built struct {
	once sync.Once
	path string
	err  error
}

// Build compiles the fake simulator once per test process and returns the
// path of the program (named accel-sim.out). The program lives in a
// temporary directory that outlives the test, so every test of the process
// can share it. A test that builds it runs it: under go test -short it is
// skipped here.
func Build(tb testing.TB) string {
	tb.Helper()
	testkit.SkipShort(tb, "builds and runs the stand-in simulator")
	built.once.Do(func() {
		built.path, built.err = build()
	})
	if built.err != nil {
		tb.Fatalf("build fakesim: %v", built.err)
	}
	return built.path
}

func build() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate fakesim sources")
	}
	dir, err := procdir.New("cascade-fakesim-")
	if err != nil {
		return "", err
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "accel-sim.out")
	cmd := exec.Command(gotool, "build", "-o", out, "./cmd/fakesim")
	cmd.Dir = filepath.Dir(file)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s", err, msg)
	}
	return out, nil
}
