package simlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/kernellist/kernellisttest"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// The logs in testdata are cut from real Accel-Sim output (with
// GPGPU-Sim's statistics trimmed): ok.log has two kernels, 7146 and 3510
// cycles; the others break it the way the simulator breaks.
func TestLogParserOutcomes(t *testing.T) {
	ctx := "0x6165bdd7ec90"
	tests := []struct {
		name      string
		log       string
		expected  int
		exit      Exit
		failure   Failure // "" for success
		reason    []string
		kernels   int // results, truncated ones included
		done      int
		launched  int
		truncated int // LaunchUID of the truncated result, 0 for none
	}{
		{name: "ok", log: "ok.log", expected: 2, kernels: 2, done: 2, launched: 2},
		{name: "ok with a signal after exit detected", log: "ok.log", expected: 2, exit: Exit{Code: -1, Signal: "segmentation fault"},
			failure: FailureCrash, reason: []string{"signal: segmentation fault", "after 2 of 2 kernels"}, kernels: 2, done: 2, launched: 2},
		{name: "deadlock", log: "deadlock.log", expected: 2, exit: Exit{Code: 134},
			failure: FailureDeadlock, reason: []string{"in kernel uid 2 (kernel-2-ctx_0x6165bdd7ec90.traceg)", "after 1 of 2 kernels", "deadlock detected: last writeback core 12"},
			kernels: 1, done: 1, launched: 2},
		{name: "max cycles, partial stats printed", log: "maxcycles.log", expected: 2,
			failure: FailureLimit, reason: []string{"maximum cycles or instructions", "in kernel uid 2", "after 1 of 2 kernels"},
			kernels: 2, done: 1, launched: 2, truncated: 2},
		{name: "max cycles, older simulator prints no stats", log: "maxcycles_old.log", expected: 2,
			failure: FailureLimit, reason: []string{"in kernel uid 2", "after 1 of 2 kernels"}, kernels: 1, done: 1, launched: 2},
		{name: "unsupported binary version exits 0", log: "unsupported.log", expected: 2,
			failure: FailureUnsupportedBinary, reason: []string{"unsupported binary version: 20 in kernel-2-ctx_0x6165bdd7ec90.traceg", "exits 0", "after 1 of 2 kernels"},
			kernels: 1, done: 1, launched: 1},
		{name: "missing trace reads as binary version 0", log: "unsupported_missing_trace.log", expected: 2,
			failure: FailureUnsupportedBinary, reason: []string{"unsupported binary version: 0", "header could not be read", "No such file or directory"},
			kernels: 1, done: 1, launched: 1},
		{name: "crash", log: "crash.log", expected: 2, exit: Exit{Code: 134},
			failure: FailureCrash, reason: []string{"simulator exit 134 after 1 of 2 kernels", "Assertion `start_of_tb_stream_found' failed"},
			kernels: 1, done: 1, launched: 2},
		{name: "1.x simulator rejects tracez", log: "tracez_rejected.log", expected: 2, exit: Exit{Code: -1, Signal: "aborted"},
			failure: FailureTraceFormat, reason: []string{"does not read this trace's file type", "in kernel-1-ctx_0x6165bdd7ec90.tracez", `"what():  Unsupported file type!"`, "signal: aborted", "after 0 of 2 kernels"}},
		{name: "truncated traceg quotes the assertion, not Aborted", log: "truncated_traceg.log", expected: 2, exit: Exit{Code: 134},
			failure: FailureCrash, reason: []string{"simulator exit 134 after 1 of 2 kernels: accel-sim.out: trace_parser.cc:457: bool PipeReader::readLine(std::string&): Assertion 'line.back() == '\\n'' failed."},
			kernels: 1, done: 1, launched: 1},
		{name: "unknown option", log: "unknown_option.log", expected: 2, exit: Exit{Code: 1},
			failure: FailureCrash, reason: []string{"simulator exit 1 after 0 of 2 kernels: GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"}},
		{name: "side file missing", log: "side_file_missing.log", expected: 2, exit: Exit{Code: 255},
			failure: FailureCrash, reason: []string{"simulator exit 255 after 0 of 2 kernels: Could not open configuration file config_pascal_islip.icnt"}},
		{name: "killed mid stats block", log: "cut.log", expected: 2, exit: Exit{Code: -1, Signal: "killed"},
			failure: FailureCrash, reason: []string{"signal: killed after 1 of 2 kernels"}, kernels: 1, done: 1, launched: 2},
		{name: "exit 0 without exit detected", log: "noexit.log", expected: 2,
			failure: FailureNoExit, reason: []string{`without "GPGPU-Sim: *** exit detected ***"`, "after 2 of 2 kernels"}, kernels: 2, done: 2, launched: 2},
		{name: "exit detected but kernels missing", log: "missing.log", expected: 2,
			failure: FailureMissingKernels, reason: []string{"reported 1 of 2 kernels"}, kernels: 1, done: 1, launched: 1},
		{name: "nan ipc", log: "nan.log", expected: 1, kernels: 1, done: 1, launched: 1},
		{name: "concurrent kernels", log: "concurrent.log", expected: 2, kernels: 2, done: 2, launched: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.log))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := Parse(f, tt.expected)
			if err != nil {
				t.Fatal(err)
			}
			out := p.Outcome(tt.exit)
			if out.Failure != tt.failure || out.Succeeded != (tt.failure == "") {
				t.Errorf("outcome = %+v, want failure %q", out, tt.failure)
			}
			for _, s := range tt.reason {
				if !strings.Contains(out.Reason, s) {
					t.Errorf("reason %q lacks %q", out.Reason, s)
				}
			}
			ks := p.Kernels()
			if len(ks) != tt.kernels {
				t.Fatalf("got %d kernels %+v, want %d", len(ks), ks, tt.kernels)
			}
			pr := p.Progress()
			if pr != (Progress{Launched: tt.launched, Done: tt.done, Total: tt.expected}) {
				t.Errorf("progress = %+v", pr)
			}
			for i, k := range ks {
				if k.LaunchUID != i+1 || cascade.Deref(k.KernelID) != i+1 || cascade.Deref(k.Context) != ctx {
					t.Errorf("kernel %d = %+v", i, k)
				}
				if k.Truncated != (k.LaunchUID == tt.truncated) {
					t.Errorf("kernel %d truncated = %v", i, k.Truncated)
				}
				if math.IsNaN(k.IPC) {
					t.Errorf("kernel %d: IPC is NaN", i)
				}
			}
		})
	}
}

func TestLogParserNumbers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ok.log"))
	if err != nil {
		t.Fatal(err)
	}
	// Feed it in awkward chunks, as a growing log file is read.
	p := NewParser(2)
	for b := data; len(b) > 0; {
		n := min(len(b), 37)
		p.Write(b[:n])
		b = b[n:]
	}
	if out := p.Outcome(Exit{}); !out.Succeeded {
		t.Fatalf("outcome = %+v", out)
	}
	want := []cascade.RunKernel{
		{LaunchUID: 1, Name: "_Z6vecAddPdS_S_i", TraceFile: "/data/s3/traces/llama/traces/kernel-1-ctx_0x6165bdd7ec90.traceg",
			KernelID: cascade.Ptr(1), Context: cascade.Ptr("0x6165bdd7ec90"), SimCycles: 7146, SimInstructions: 1606656, IPC: 224.8329},
		{LaunchUID: 2, Name: "_Z9reduceSumPdS_i", TraceFile: "/data/s3/traces/llama/traces/kernel-2-ctx_0x6165bdd7ec90.traceg",
			KernelID: cascade.Ptr(2), Context: cascade.Ptr("0x6165bdd7ec90"), SimCycles: 3510, SimInstructions: 351000, IPC: 100},
	}
	if got := p.Kernels(); !reflect.DeepEqual(got, want) {
		t.Errorf("kernels:\n got %s\nwant %s", kernelsText(got), kernelsText(want))
	}
}

// kernelsText prints results with their pointers followed.
func kernelsText(ks []cascade.RunKernel) string {
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "\n\t%+v kernel %v context %q", k, cascade.Deref(k.KernelID), cascade.Deref(k.Context))
	}
	return b.String()
}

func TestLogParserConcurrentNames(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "concurrent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Parse(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	ks := p.Kernels()
	if ks[0].Name != "_Z6vecAddPdS_S_i" || ks[1].Name != "_Z9reduceSumPdS_i" || ks[1].SimCycles != 1000 {
		t.Errorf("kernels = %+v", ks)
	}
}

func TestExitString(t *testing.T) {
	for _, tt := range []struct {
		exit Exit
		want string
		ok   bool
	}{
		{Exit{}, "exit 0", true},
		{Exit{Code: 1}, "exit 1", false},
		{Exit{Code: -1, Signal: "killed"}, "signal: killed", false},
	} {
		if got := tt.exit.String(); got != tt.want || tt.exit.OK() != tt.ok {
			t.Errorf("%+v: String = %q, OK = %v", tt.exit, got, tt.exit.OK())
		}
	}
}

// TestLogParserFakesim runs the stand-in simulator in each of its modes and
// parses what it prints, exactly as a run would.
func TestLogParserFakesim(t *testing.T) {
	bin := fakesim.Build(t)
	cfg := simconfig.LoadOne(filepath.Join(simconfigtest.Write(t, t.TempDir(), simconfigtest.H100), simconfigtest.H100))
	tests := []struct {
		name         string
		mode         string
		removeKernel int // delete this kernel's trace file first
		failure      Failure
		results      int
		truncated    int // LaunchUID, 0 for none
	}{
		{name: "ok", mode: fakesim.ModeOK, results: 3},
		{name: "slow", mode: fakesim.ModeSlow, results: 3},
		{name: "crash", mode: fakesim.ModeCrash, failure: FailureCrash, results: 1},
		{name: "deadlock", mode: fakesim.ModeDeadlock, failure: FailureDeadlock, results: 1},
		{name: "maxcycles", mode: fakesim.ModeMaxCycles, failure: FailureLimit, results: 2, truncated: 2},
		{name: "unsupported", mode: fakesim.ModeUnsupported, failure: FailureUnsupportedBinary},
		{name: "noexit", mode: fakesim.ModeNoExit, failure: FailureNoExit, results: 3},
		{name: "missing trace file", mode: fakesim.ModeOK, removeKernel: 3, failure: FailureUnsupportedBinary, results: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "traces")
			list := kernellisttest.WriteTraces(t, dir,
				"MemcpyHtoD,0x00007f0e8e000000,800",
				"kernel-1-ctx_0x6165bdd7ec90.traceg",
				"kernel-2-ctx_0x6165bdd7ec90.traceg",
				"MemcpyHtoD,0x00007f0e8e100000,800",
				"kernel-1-ctx_0x7ff00000a000.traceg",
			)
			var sizes []int64
			for _, name := range []string{"kernel-1-ctx_0x6165bdd7ec90.traceg", "kernel-2-ctx_0x6165bdd7ec90.traceg", "kernel-1-ctx_0x7ff00000a000.traceg"} {
				info, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, info.Size())
				if len(sizes) == tt.removeKernel {
					os.Remove(filepath.Join(dir, name))
				}
			}

			p := NewParser(3)
			cmd := exec.Command(bin, append([]string{"-trace", list}, simconfig.SimulatorArgs(cfg)...)...)
			cmd.Env = append(os.Environ(), fakesim.EnvMode+"="+tt.mode, fakesim.EnvDelay+"=1ms")
			cmd.Stdout, cmd.Stderr = p, p
			err := cmd.Run()
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatal(err)
			}
			out := p.Outcome(ExitFromProcessState(cmd.ProcessState))
			if out.Failure != tt.failure {
				t.Errorf("outcome = %+v, want %q", out, tt.failure)
			}
			ks := p.Kernels()
			if len(ks) != tt.results {
				t.Fatalf("got %d results, want %d: %+v", len(ks), tt.results, ks)
			}
			wantRefs := []kernellist.Ref{{ID: 1, Context: "0x6165bdd7ec90"}, {ID: 2, Context: "0x6165bdd7ec90"}, {ID: 1, Context: "0x7ff00000a000"}}
			for i, k := range ks {
				cycles, insn := fakesim.Cycles(i+1, sizes[i]), fakesim.Instructions(i+1, sizes[i])
				if k.LaunchUID == tt.truncated {
					cycles, insn = cycles/2, insn/2
				}
				want := cascade.RunKernel{
					LaunchUID: i + 1, Name: fmt.Sprintf("_Z7kernel%dPf", wantRefs[i].ID),
					TraceFile: filepath.Join(dir, filepath.Base(ks[i].TraceFile)), KernelID: &wantRefs[i].ID, Context: &wantRefs[i].Context,
					SimCycles: cycles, SimInstructions: insn, Truncated: k.LaunchUID == tt.truncated,
				}
				k.IPC = 0
				if !reflect.DeepEqual(k, want) {
					t.Errorf("kernel %d:%s\nwant%s", i, kernelsText([]cascade.RunKernel{k}), kernelsText([]cascade.RunKernel{want}))
				}
			}
		})
	}
}

// TestLogParserFakesimKilled stops a simulator that ignores SIGTERM, as
// cancelling a run must.
func TestLogParserFakesimKilled(t *testing.T) {
	bin := fakesim.Build(t)
	cfg := simconfig.LoadOne(filepath.Join(simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100), simconfigtest.QV100))
	list := kernellisttest.WriteTraces(t, t.TempDir(), "kernel-1.traceg")
	cmd := exec.Command(bin, append([]string{"-trace", list}, simconfig.SimulatorArgs(cfg)...)...)
	cmd.Env = append(os.Environ(), fakesim.EnvMode+"="+fakesim.ModeIgnoreTerm, fakesim.EnvDelay+"=1ms")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := NewParser(1)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		p.Line(sc.Text())
		if strings.Contains(sc.Text(), "waiting to be killed") {
			break
		}
	}
	// It ignores SIGTERM (the kernel drops it), so the SIGKILL that
	// follows is what ends it, as when proc stops a stubborn simulator.
	if !ignoresSIGTERM(t, cmd.Process.Pid) {
		t.Fatal("the stand-in does not ignore SIGTERM")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() {
		io.Copy(p, stdout)
		exited <- cmd.Wait()
	}()
	cmd.Process.Kill()
	<-exited
	exit := ExitFromProcessState(cmd.ProcessState)
	if exit != (Exit{Code: -1, Signal: "killed"}) {
		t.Errorf("exit = %+v", exit)
	}
	out := p.Outcome(exit)
	if out.Failure != FailureCrash || !strings.Contains(out.Reason, "signal: killed after 1 of 1 kernels") {
		t.Errorf("outcome = %+v", out)
	}
}

// ignoresSIGTERM reads whether process pid has SIGTERM ignored, from the
// SigIgn mask in /proc/<pid>/status.
func ignoresSIGTERM(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			if err != nil {
				t.Fatalf("SigIgn %q: %v", mask, err)
			}
			return m&(1<<(syscall.SIGTERM-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return false
}

func TestLogParserLaunchOrder(t *testing.T) {
	p := NewParser(2)
	for _, l := range []string{
		"Processing kernel /t/kernel-1.traceg",
		"Processing kernel /t/kernel-2.traceg",
		"launching kernel name: _Z1av uid: 1 cuda_stream_id: 0",
		"launching kernel name: _Z1bv uid: 2 cuda_stream_id: 1",
		"kernel_name = _Z1av _Z1bv ", "kernel_launch_uid = 2 ", // uid 2 finished first
		"gpu_sim_cycle = 10", "gpu_sim_insn = 20", "gpu_ipc =       2.0000", "gpu_tot_sim_cycle = 10",
		"kernel_name = _Z1av ", "kernel_launch_uid = 1 ",
		"gpu_sim_cycle = 30", "gpu_sim_insn = 30", "gpu_ipc =       1.0000", "gpu_tot_sim_cycle = 40",
		"GPGPU-Sim: *** exit detected ***",
	} {
		p.Line(l)
	}
	ks := p.Kernels()
	if len(ks) != 2 || ks[0].LaunchUID != 1 || ks[0].SimCycles != 30 || ks[1].LaunchUID != 2 || cascade.Deref(ks[1].KernelID) != 2 || ks[1].Name != "_Z1bv" {
		t.Errorf("kernels = %+v", ks)
	}
	if out := p.Outcome(Exit{}); !out.Succeeded {
		t.Errorf("outcome = %+v", out)
	}
}
