// Command fakesim stands in for Accel-Sim's accel-sim.out in tests; see
// package github.com/cascade-sim/cascade/testkit/fakesim for what it prints
// and how FAKESIM_MODE makes it fail.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type kernel struct {
	index  int // 1-based position among the list's kernels
	path   string
	size   int64
	name   string
	stream int64
	binary int // the header's -binary version; -1 when not read
}

func run(args []string, stdout, stderr io.Writer) int {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	// Every line goes out at once, as Accel-Sim fflushes: tests and the run
	// log follow progress while the program runs.
	say := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	fail := func(code int, format string, a ...any) int {
		out.Flush()
		fmt.Fprintf(stderr, format+"\n", a...)
		return code
	}

	mode := os.Getenv(fakesim.EnvMode)
	if mode == "" {
		mode = fakesim.ModeOK
	}
	switch mode {
	case fakesim.ModeOK, fakesim.ModeCrash, fakesim.ModeDeadlock, fakesim.ModeMaxCycles,
		fakesim.ModeUnsupported, fakesim.ModeSlow, fakesim.ModeIgnoreTerm, fakesim.ModeNoExit, fakesim.ModeMemory, fakesim.ModeSegfault:
	default:
		return fail(2, "fakesim: unknown %s %q", fakesim.EnvMode, mode)
	}
	delay := time.Second
	if s := os.Getenv(fakesim.EnvDelay); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fail(2, "fakesim: %s: %v", fakesim.EnvDelay, err)
		}
		delay = d
	}
	memoryMB := 256
	if s := os.Getenv(fakesim.EnvMemoryMB); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fail(2, "fakesim: %s: want megabytes, got %q", fakesim.EnvMemoryMB, s)
		}
		memoryMB = n
	}
	version := os.Getenv(fakesim.EnvVersion)
	switch version {
	case "":
		version = fakesim.Version2
	case fakesim.Version1, fakesim.Version2:
	default:
		return fail(2, "fakesim: unknown %s %q (want %s or %s)", fakesim.EnvVersion, version, fakesim.Version1, fakesim.Version2)
	}
	if os.Getenv(fakesim.EnvNeedsLib) != "" && !libOnPath() {
		// The dynamic loader stops the real program before main.
		return fail(127, "%s: error while loading shared libraries: %s: cannot open shared object file: No such file or directory", os.Args[0], fakesim.Libcudart)
	}
	var decodes map[int]bool // nil: every binary version
	if s := os.Getenv(fakesim.EnvBinaryVersions); s != "" {
		decodes = map[int]bool{}
		for f := range strings.SplitSeq(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fail(2, "fakesim: %s: %q is no binary version", fakesim.EnvBinaryVersions, f)
			}
			decodes[v] = true
		}
	}
	step := stepper{path: os.Getenv(fakesim.EnvStep), launches: os.Getenv(fakesim.EnvStepLaunch) != ""}
	var progress int64
	if v := os.Getenv(fakesim.EnvProgress); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fail(2, "fakesim: %s=%q: want a number of bytes", fakesim.EnvProgress, v)
		}
		progress = n
	}
	if os.Getenv(simprobe.EnvProbe) != "" {
		// A probe of what the simulator can do is no run: the behaviour
		// a test chose for runs is not the probe's, and it must not take
		// a test's steps.
		mode, step, progress = fakesim.ModeOK, stepper{}, 0
	}
	if mode == fakesim.ModeIgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
		say("fakesim: ignoring SIGTERM")
	}

	fmt.Fprint(out, "Accel-Sim [build fakesim]")
	say("\n\n        *** GPGPU-Sim Simulator Version 4.2.0  [build fakesim] ***\n")

	var trace string
	var configs []string
	var cmdline [][2]string // other options, in order
	for i := 0; i < len(args); i++ {
		if i+1 >= len(args) && (args[i] == "-trace" || args[i] == "-config") {
			return fail(1, "\n\nGPGPU-Sim ** ERROR: Missing value for option '%s'.", args[i])
		}
		if i+1 >= len(args) { // as the real simulator says of "-gpgpu_n_clusters" alone
			return fail(1, "\n\nGPGPU-Sim ** ERROR: Cannot parse value '' for option '%s'.", args[i])
		}
		switch args[i] {
		case "-trace":
			trace = args[i+1]
		case "-config":
			configs = append(configs, args[i+1])
		default:
			cmdline = append(cmdline, [2]string{args[i], args[i+1]})
		}
		i++
	}
	options, refusal := readOptions(configs, cmdline)
	if refusal != "" {
		return fail(1, "\n\nGPGPU-Sim ** ERROR: %s", refusal)
	}
	scale := clusterScale(options)
	say("GPGPU-Sim: Configuration options:\n")
	for _, c := range configs {
		data, _ := os.ReadFile(c)
		for line := range strings.SplitSeq(string(data), "\n") {
			if opt, _, _ := strings.Cut(line, "#"); strings.HasPrefix(strings.TrimSpace(opt), "-") {
				say("%s", strings.TrimSpace(opt))
			}
		}
	}
	// The interconnect's own config is opened by its name as given, so
	// relative to the working directory, as GPGPU-Sim's intersim does.
	if icnt, ok := options["-inter_config_file"]; ok && options["-network_mode"] == "1" {
		if _, err := os.Stat(icnt); err != nil {
			return fail(255, "Could not open configuration file %s", icnt)
		}
		say("GPGPU-Sim: interconnect configured from %s", icnt)
	}
	if trace == "" {
		trace = "./traces/kernelslist.g" // Accel-Sim's default
	}
	list, err := os.ReadFile(trace)
	if err != nil {
		say("Unable to open file: %s", trace)
		return 1
	}

	var memcpys [][]string // copies before each kernel
	var kernels []kernel
	var before []string
	dir := filepath.Dir(trace)
	for line := range strings.SplitSeq(string(list), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "MemcpyHtoD"):
			before = append(before, line)
		case strings.HasPrefix(line, "kernel"):
			kernels = append(kernels, kernel{index: len(kernels) + 1, path: dir + "/" + line})
			memcpys = append(memcpys, before)
			before = nil
		}
	}
	n := len(kernels)
	failing := fakesim.FailingKernel(n)
	byID := os.Getenv(fakesim.EnvNumberBy) == "id"
	var power *powerReport
	if options["-power_simulation_enabled"] == "1" {
		if power, err = openPowerReport(); err != nil {
			return fail(1, "fakesim: %v", err)
		}
		defer power.close()
	}

	var totCycles, totInsn int64
	var tot totals
	for i := range kernels {
		k := &kernels[i]
		if i > 0 && step.launches && step.path != "" {
			if err := step.wait(); err != nil {
				return fail(2, "fakesim: %s: %v", fakesim.EnvStep, err)
			}
		}
		for _, m := range memcpys[i] {
			say("launching memcpy command : %s", m)
		}
		say("Processing kernel %s", k.path)
		if code, stop := readTrace(k, version, stdout, stderr, say); stop {
			return code
		}
		if decodes != nil && k.binary >= 0 && !decodes[k.binary] {
			say("unsupported binary version: %d", k.binary)
			return 0
		}
		if mode == fakesim.ModeUnsupported && k.index == 1 {
			say("unsupported binary version: 20")
			return 0
		}
		say("Header info loaded for kernel command : %s", k.path)
		say("launching kernel name: %s uid: %d cuda_stream_id: %d", k.name, k.index, k.stream)
		say("GPGPU-Sim uArch: Shader 0 bind to kernel %d '%s'", k.index, k.name)
		if mode == fakesim.ModeSlow || mode == fakesim.ModeIgnoreTerm {
			time.Sleep(delay)
		}
		if step.path != "" {
			if err := step.wait(); err != nil {
				return fail(2, "fakesim: %s: %v", fakesim.EnvStep, err)
			}
		}

		if mode == fakesim.ModeMemory && k.index == failing {
			if !mayAllocate(int64(memoryMB) << 20) {
				// C++'s new throws when the address space limit
				// (ulimit -v) is reached, and nothing catches it.
				say("GPGPU-Sim uArch: cycles simulated: %d  inst.: %d", totCycles, totInsn)
				fmt.Fprintf(stderr, "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n")
				abort(stdout)
				return fakesim.ExitAbort // not reached
			}
			hog := make([]byte, memoryMB<<20)
			for i := 0; i < len(hog); i += 4096 {
				hog[i] = 1
			}
			say("fakesim: holding %d MB", memoryMB)
			time.Sleep(delay)
			runtime.KeepAlive(hog)
		}
		num := k.index // what its numbers are of
		if byID {
			num = kernelID(k.path, k.index)
		}
		cycles, insn := scale(fakesim.Cycles(num, k.size)), fakesim.Instructions(num, k.size)
		for written, c := int64(0), int64(500); written < progress; c += 500 {
			n, _ := fmt.Fprintf(out, "GPGPU-Sim uArch: cycles simulated: %d  inst.: %d (ipc=%.1f) sim_rate=%d (inst/sec) elapsed = 0:0:00:%02d / Wed Dec  2 14:00:01 2026\n",
				totCycles+c, totInsn+c*24, 24.0, c*24, c/500%60)
			written += int64(n)
		}
		out.Flush()
		if k.index == failing {
			switch mode {
			case fakesim.ModeCrash:
				say("GPGPU-Sim uArch: cycles simulated: %d  inst.: %d", totCycles+cycles/2, totInsn+insn/2)
				return fail(fakesim.ExitAbort, "accel-sim.out: trace_parser.cc:401: void trace_parser::get_next_threadblock_traces(): Assertion `start_of_tb_stream_found' failed.")
			case fakesim.ModeSegfault:
				// The real simulator prints nothing as it dies: only a
				// shell that ran it would say "Segmentation fault".
				say("GPGPU-Sim uArch: cycles simulated: %d  inst.: %d", totCycles+cycles/2, totInsn+insn/2)
				killSelf(stdout, "SEGV")
				return 139 // not reached
			case fakesim.ModeDeadlock:
				say("\n\nGPGPU-Sim uArch: ERROR ** deadlock detected: last writeback core 0 @ gpu_sim_cycle %d (+ gpu_tot_sim_cycle %d) (50000 cycles ago)", cycles/2, totCycles)
				say("GPGPU-Sim uArch: DEADLOCK  shader cores no longer committing instructions [core(# threads)]:")
				say("GPGPU-Sim uArch: DEADLOCK  core 0(256) \nGPGPU-Sim uArch DEADLOCK:  memory partition 0 busy")
				say("\nRe-run the simulator in gdb and use debug routines in .gdbinit to debug this")
				return fail(fakesim.ExitAbort, "accel-sim.out: Aborted (core dumped)")
			case fakesim.ModeMaxCycles:
				cycles, insn = cycles/2, insn/2
			}
		}
		printStats(say, k, cycles, insn, totCycles, totInsn)
		power.kernel(k.index, k.name)
		totCycles += cycles
		totInsn += insn
		tot.add(num, insn)
		tot.print(say)
		say("\n\ngpgpu_simulation_time = 0 days, 0 hrs, 0 min, %d sec (%d sec)", k.index, k.index)
		say("gpgpu_simulation_rate = %d (inst/sec)", totInsn/int64(k.index))
		say("gpgpu_simulation_rate = %d (cycle/sec)", totCycles/int64(k.index))
		say("gpgpu_silicon_slowdown = %dx", 1_000_000+int64(k.index))
		if mode == fakesim.ModeMaxCycles && k.index == failing {
			say("GPGPU-Sim: ** break due to reaching the maximum cycles (or instructions) **")
			break
		}
	}

	switch mode {
	case fakesim.ModeNoExit:
		return 0
	case fakesim.ModeIgnoreTerm:
		say("fakesim: all kernels done, waiting to be killed")
		for {
			time.Sleep(time.Hour)
		}
	}
	say("GPGPU-Sim: *** simulation thread exiting ***")
	say("GPGPU-Sim: *** exit detected ***")
	return 0
}

func printStats(say func(string, ...any), k *kernel, cycles, insn, totCycles, totInsn int64) {
	ipc := func(i, c int64) float64 {
		if c == 0 {
			return 0
		}
		return float64(i) / float64(c)
	}
	say("kernel_name = %s ", k.name)
	say("kernel_launch_uid = %d ", k.index)
	say("kernel_stream_id = %d", k.stream)
	say("gpu_sim_cycle = %d", cycles)
	say("gpu_sim_insn = %d", insn)
	say("gpu_ipc = %12.4f", ipc(insn, cycles))
	say("gpu_tot_sim_cycle = %d", totCycles+cycles)
	say("gpu_tot_sim_insn = %d", totInsn+insn)
	say("gpu_tot_ipc = %12.4f", ipc(totInsn+insn, totCycles+cycles))
	say("gpu_tot_issued_cta = %d", k.index*98)
	say("gpu_occupancy = 83.1250%% ")
	say("gpu_tot_occupancy = 83.1250%% ")
	say("max_total_param_size = 0")
	say("gpu_stall_dramfull = 0")
	say("gpu_stall_icnt2sh    = 0")
}

// totals are the counters Accel-Sim keeps growing across kernels, from
// memory accesses in proportion to a kernel's instructions: kernel i reads
// insn/44 lines from L2, finding i-1 in 3 of them there; its L1D (as on
// Volta) hits a quarter.
type totals struct {
	warpInsts, l2ReadHits, l2ReadAcc, l2WriteHits, l2WriteAcc  int64
	l1ReadHits, l1ReadMSHR, l1ReadAcc, l1WriteHits, l1WriteAcc int64
	dramReads, dramWrites, l1Conflicts, stallDram, stallShd    int64
	stallCoal, warpStall, warpIdle, warpScoreboard, warpFull   int64
}

func (t *totals) add(i int, insn int64) {
	acc := insn/44 + 1
	hits := acc * int64(min(i-1, 3)) / 4
	t.warpInsts += insn/32 + 1
	t.l2ReadAcc += acc
	t.l2ReadHits += hits
	t.l2WriteAcc += acc / 2
	t.l2WriteHits += acc / 2
	t.l1ReadAcc += acc
	t.l1ReadHits += acc / 4
	t.l1ReadMSHR += acc / 8
	t.l1WriteAcc += acc / 2
	t.dramReads += acc - hits
	t.dramWrites += int64(i)
	t.l1Conflicts += acc / 3
	t.stallDram += acc / 5
	t.stallShd += acc
	t.stallCoal += acc / 2
	t.warpStall += 3 * acc
	t.warpIdle += acc
	t.warpScoreboard += 2 * acc
	t.warpFull += insn / 32
}

// print writes the rest of a kernel's statistics block as the real
// simulator does (tabs, spacing and order as in its log), with the
// counters Cascade reads among lines it does not.
func (t *totals) print(say func(string, ...any)) {
	say("gpu_stall_dramfull = %d", t.stallDram)
	say("gpu_stall_icnt2sh    = 0")
	say("partiton_level_parallism =       6.3619")
	say("L2_BW  =     %.4f GB/Sec", float64(t.l2ReadAcc%1000)+0.25)
	say("L2_BW_total  =     288.4723 GB/Sec")
	say("gpu_total_sim_rate=220316\n")
	say("========= Core cache stats =========")
	say("L1D_cache:\n\tL1D_total_cache_accesses = %d", t.l1ReadAcc)
	say("\nTotal_core_cache_stats:")
	for _, c := range []struct {
		kind           string
		hit, mshr, acc int64
	}{{"GLOBAL_ACC_R", t.l1ReadHits, t.l1ReadMSHR, t.l1ReadAcc}, {"GLOBAL_ACC_W", t.l1WriteHits, 0, t.l1WriteAcc}} {
		say("\tTotal_core_cache_stats_breakdown[%s][HIT] = %d", c.kind, c.hit)
		say("\tTotal_core_cache_stats_breakdown[%s][MISS] = %d", c.kind, c.acc-c.hit)
		say("\tTotal_core_cache_stats_breakdown[%s][MSHR_HIT] = %d", c.kind, c.mshr)
		say("\tTotal_core_cache_stats_breakdown[%s][TOTAL_ACCESS] = %d", c.kind, c.acc)
	}
	say("gpgpu_n_tot_thrd_icount = %d", 32*t.warpInsts)
	say("gpgpu_n_tot_w_icount = %d", t.warpInsts)
	say("gpgpu_n_stall_shd_mem = %d", t.stallShd)
	say("gpgpu_n_load_insn  = %d", t.l1ReadAcc*4)
	say("gpgpu_n_shmem_bkconflict = 0")
	say("gpgpu_n_l1cache_bkconflict = %d", t.l1Conflicts)
	say("gpgpu_stall_shd_mem[c_mem][resource_stall] = 0")
	say("gpgpu_stall_shd_mem[s_mem][bk_conf] = 0")
	say("gpgpu_stall_shd_mem[gl_mem][resource_stall] = %d", t.l1Conflicts)
	say("gpgpu_stall_shd_mem[gl_mem][coal_stall] = %d", t.stallCoal)
	say("gpgpu_stall_shd_mem[gl_mem][data_port_stall] = 0")
	say("Warp Occupancy Distribution:")
	var b strings.Builder
	fmt.Fprintf(&b, "Stall:%d\tW0_Idle:%d\tW0_Scoreboard:%d", t.warpStall, t.warpIdle, t.warpScoreboard)
	for w := 1; w < 32; w++ {
		fmt.Fprintf(&b, "\tW%d:0", w)
	}
	fmt.Fprintf(&b, "\tW32:%d", t.warpFull)
	say("%s", b.String())
	say("total dram reads = %d", t.dramReads)
	say("total dram writes = %d", t.dramWrites)
	say("L2_total_cache_accesses = %d", t.l2ReadAcc+t.l2WriteAcc)
	say("L2_total_cache_breakdown:")
	for _, c := range []struct {
		kind     string
		hit, acc int64
	}{{"GLOBAL_ACC_R", t.l2ReadHits, t.l2ReadAcc}, {"GLOBAL_ACC_W", t.l2WriteHits, t.l2WriteAcc}} {
		say("\tL2_cache_stats_breakdown[%s][HIT] = %d", c.kind, c.hit)
		say("\tL2_cache_stats_breakdown[%s][MISS] = %d", c.kind, c.acc-c.hit)
		say("\tL2_cache_stats_breakdown[%s][TOTAL_ACCESS] = %d", c.kind, c.acc)
	}
}

// mayAllocate reports whether n more bytes fit in the process's address
// space limit (RLIMIT_AS, ulimit -v), if it has one (all ones: none).
func mayAllocate(n int64) bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur == ^uint64(0) {
		return true
	}
	return uint64(n) < lim.Cur
}

// abort ends the program with SIGABRT, as an uncaught C++ exception does.
// Go's runtime turns a SIGABRT it receives into a stack dump and exit 2, so
// the process becomes a shell that kills itself: same pid, same parent.
func abort(stdout io.Writer) { killSelf(stdout, "ABRT") }

// killSelf ends the program with the signal named sig ("ABRT", "SEGV"), as
// abort does.
func killSelf(stdout io.Writer, sig string) {
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	sh, err := exec.LookPath("sh")
	if err == nil {
		err = syscall.Exec(sh, []string{"sh", "-c", "kill -" + sig + " $$"}, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "fakesim: cannot die of SIG%s: %v\n", sig, err)
	os.Exit(fakesim.ExitAbort)
}

// libOnPath reports whether GPGPU-Sim's libcudart.so is in a directory of
// LD_LIBRARY_PATH, where the dynamic loader looks for it.
func libOnPath() bool {
	for _, dir := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, fakesim.Libcudart)); err == nil {
			return true
		}
	}
	return false
}

// kernelID is the kernel id of a trace file's name ("kernel-12.traceg",
// "kernel-12-ctx_0x1.traceg"); index when the name has none.
func kernelID(path string, index int) int {
	name := filepath.Base(path)
	rest, ok := strings.CutPrefix(name, "kernel-")
	if !ok {
		return index
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return index
	}
	id, err := strconv.Atoi(rest[:end])
	if err != nil || id < 1 {
		return index
	}
	return id
}
