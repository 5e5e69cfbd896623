package fakesim_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestFailures checks the ways the program fails before simulating, each
// as Accel-Sim fails. The log parser's tests in package runs run every
// FAKESIM_MODE.
func TestFailures(t *testing.T) {
	bin := fakesim.Build(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpgpusim.config")
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("gpgpusim.config", "-gpgpu_clock_domains 1000:1000:1000:1000 # clocks\n")
	kepler := write("kepler.config", "# shipped with Accel-Sim, unknown to GPGPU-Sim dev\n-smem_latency 64\n")
	pascal := write("pascal.config", "-network_mode 1\n-inter_config_file config_pascal_islip.icnt\n")
	side := t.TempDir() // a run directory holding the side file
	if err := os.WriteFile(filepath.Join(side, "config_pascal_islip.icnt"), []byte("topology = fly;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	libDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(libDir, fakesim.Libcudart), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	write("kernel-1.traceg", "-kernel name = _Z1kv\n-binary version = 90\n\n#traces format\n")
	write("kernel-1.trace", "-kernel name = _Z1kv\n")
	write("kernel-1.tracez", "-kernel name = _Z1kv\n-binary version = 90\n\x00")
	write("kernel-2.traceg", "-kernel name = _Z1kv\n-binary version = 90\n\n#traces format\nwarp = 0\ninsts = 1\n0010 ffffffff 0 EXIT 0 0")
	ok := write("ok.g", "kernel-1.traceg\n")
	raw := write("raw.g", "kernel-1.trace\n")
	tracez := write("tracez.g", "kernel-1.tracez\n")
	truncated := write("truncated.g", "kernel-2.traceg\n")
	missing := write("missing.g", "kernel-9.traceg\n")
	// The warming kernel of a segment (package l2warm), as runs writes it.
	if _, err := l2warm.WriteKernel(dir, l2warm.Warm{Order: []l2warm.Lines{{{Lo: 0x100, Hi: 0x140}}}}, filepath.Join(dir, "kernel-1.traceg")); err != nil {
		t.Fatal(err)
	}
	warmed := write("warmed.g", "MemcpyHtoD,0x0000000000008000,64\n"+l2warm.TraceBase+".traceg\nkernel-1.traceg\n")

	tests := []struct {
		name   string
		prog   string // the program run, if not the stand-in
		args   []string
		mode   string
		env    []string
		dir    string
		code   int
		signal syscall.Signal
		stdout []string
		stderr []string
	}{
		{name: "ok", args: []string{"-trace", ok, "-config", cfg}, code: 0,
			stdout: []string{"launching kernel name: _Z1kv uid: 1 cuda_stream_id: 0", "gpu_sim_cycle = ", "GPGPU-Sim: *** exit detected ***"}},
		{name: "warming kernel first", args: []string{"-trace", warmed, "-config", cfg}, code: 0,
			stdout: []string{"Processing kernel " + filepath.Join(dir, l2warm.TraceBase+".traceg"), "launching kernel name: " + l2warm.KernelName + " uid: 1",
				"launching kernel name: _Z1kv uid: 2", "GPGPU-Sim: *** exit detected ***"}},
		{name: "config missing", args: []string{"-trace", ok, "-config", filepath.Join(dir, "nope.config")}, code: 1,
			stderr: []string{"GPGPU-Sim ** ERROR: Cannot open config file"}},
		{name: "kernel list missing", args: []string{"-trace", filepath.Join(dir, "nope.g"), "-config", cfg}, code: 1,
			stdout: []string{"Unable to open file: " + filepath.Join(dir, "nope.g")}},
		{name: "raw trace is an unsupported file type", args: []string{"-trace", raw, "-config", cfg}, code: -1, signal: syscall.SIGABRT,
			stderr: []string{"terminate called after throwing an instance of 'std::runtime_error'", "  what():  Unsupported file type!"}},
		{name: "version 1 rejects tracez", args: []string{"-trace", tracez, "-config", cfg}, env: []string{"FAKESIM_ACCELSIM_VERSION=1"},
			code: -1, signal: syscall.SIGABRT, stdout: []string{"Processing kernel " + filepath.Join(dir, "kernel-1.tracez")},
			stderr: []string{"  what():  Unsupported file type!"}},
		{name: "version 2 reads tracez", args: []string{"-trace", tracez, "-config", cfg}, code: 0,
			stdout: []string{"launching kernel name: _Z1kv uid: 1", "GPGPU-Sim: *** exit detected ***"}},
		{name: "version 1 reads traceg", args: []string{"-trace", ok, "-config", cfg}, env: []string{"FAKESIM_ACCELSIM_VERSION=1"}, code: 0,
			stdout: []string{"GPGPU-Sim: *** exit detected ***"}},
		{name: "truncated traceg", args: []string{"-trace", truncated, "-config", cfg}, code: fakesim.ExitAbort,
			stderr: []string{"trace_parser.cc:457: bool PipeReader::readLine(std::string&): Assertion 'line.back() == '\\n'' failed."}},
		{name: "missing kernel file exits 0", args: []string{"-trace", missing, "-config", cfg}, code: 0,
			stdout: []string{"unsupported binary version: 0"}, stderr: []string{"cat: " + filepath.Join(dir, "kernel-9.traceg") + ": No such file or directory"}},
		{name: "unknown option", args: []string{"-trace", ok, "-config", kepler}, code: 1,
			stderr: []string{"GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"}},
		{name: "side file missing from the working directory", args: []string{"-trace", ok, "-config", pascal}, dir: dir, code: 255,
			stderr: []string{"Could not open configuration file config_pascal_islip.icnt"}},
		{name: "side file in the working directory", args: []string{"-trace", ok, "-config", pascal}, dir: side, code: 0,
			stdout: []string{"GPGPU-Sim: *** exit detected ***"}},
		{name: "library missing", args: []string{"-trace", ok, "-config", cfg}, env: []string{"FAKESIM_NEEDS_LIB=1", "LD_LIBRARY_PATH=" + dir}, code: 127,
			stderr: []string{"error while loading shared libraries: libcudart.so"}},
		{name: "library on the path", args: []string{"-trace", ok, "-config", cfg}, env: []string{"FAKESIM_NEEDS_LIB=1", "LD_LIBRARY_PATH=" + dir + ":" + libDir}, code: 0,
			stdout: []string{"GPGPU-Sim: *** exit detected ***"}},
		{name: "unknown mode", args: []string{"-trace", ok}, mode: "sideways", code: 2, stderr: []string{`unknown FAKESIM_MODE "sideways"`}},
		{name: "memory", args: []string{"-trace", ok, "-config", cfg}, mode: fakesim.ModeMemory, env: []string{"FAKESIM_MEMORY_MB=8", "FAKESIM_DELAY=1ms"}, code: 0,
			stdout: []string{"fakesim: holding 8 MB", "GPGPU-Sim: *** exit detected ***"}},
		{name: "memory beyond ulimit -v", prog: "sh", args: []string{"-c", `ulimit -v 16000000; exec "$@"`, "sh", bin, "-trace", ok, "-config", cfg}, mode: fakesim.ModeMemory,
			env: []string{"FAKESIM_MEMORY_MB=65536"}, code: -1, signal: syscall.SIGABRT,
			stderr: []string{"terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc"}},
		{name: "memory not a number", args: []string{"-trace", ok}, mode: fakesim.ModeMemory, env: []string{"FAKESIM_MEMORY_MB=lots"}, code: 2,
			stderr: []string{`FAKESIM_MEMORY_MB: want megabytes, got "lots"`}},
		{name: "segfault", args: []string{"-trace", ok, "-config", cfg}, mode: fakesim.ModeSegfault, code: -1, signal: syscall.SIGSEGV,
			stdout: []string{"launching kernel name: _Z1kv uid: 1", "GPGPU-Sim uArch: cycles simulated: "}},
		{name: "option without value", args: []string{"-trace"}, code: 1, stderr: []string{"Missing value for option '-trace'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := bin
			if tt.prog != "" {
				prog = tt.prog
			}
			cmd := exec.Command(prog, tt.args...)
			cmd.Env = append(append(os.Environ(), fakesim.EnvMode+"="+tt.mode), tt.env...)
			cmd.Dir = tt.dir
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if got := map[bool]syscall.Signal{true: ws.Signal(), false: 0}[ws.Signaled()]; got != tt.signal {
				t.Errorf("killed by signal %v, want %v", got, tt.signal)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
		})
	}
}

// TestMemoryModeTakesTheMemory: the memory mode's resident set really
// grows by what it says it holds.
func TestMemoryModeTakesTheMemory(t *testing.T) {
	bin := fakesim.Build(t)
	dir := t.TempDir()
	for name, text := range map[string]string{"gpgpusim.config": "-gpgpu_clock_domains 1000:1000:1000:1000\n",
		"kernel-1.traceg": "-kernel name = _Z1kv\n-binary version = 90\n\n#traces format\n", "ok.g": "kernel-1.traceg\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-trace", filepath.Join(dir, "ok.g"), "-config", filepath.Join(dir, "gpgpusim.config"))
	cmd.Env = append(os.Environ(), fakesim.EnvMode+"="+fakesim.ModeMemory, fakesim.EnvMemoryMB+"=96", fakesim.EnvDelay+"=1ms")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss < 96*1024 { // KiB
		t.Fatalf("peak RSS %d KiB, want at least 96 MiB", rss)
	}
}

func TestFormula(t *testing.T) {
	if fakesim.Cycles(3, 500) != 3500 || fakesim.Instructions(3, 500) != 1521 {
		t.Error("the documented formula changed")
	}
	for n, k := range map[int]int{1: 1, 2: 1, 3: 2, 4: 2, 5: 3} {
		if got := fakesim.FailingKernel(n); got != k {
			t.Errorf("FailingKernel(%d) = %d, want %d", n, got, k)
		}
	}
}

// TestStepHoldsEachKernel runs two kernels through FAKESIM_STEP: each
// kernel's statistics come only after the test wrote its line.
func TestStepHoldsEachKernel(t *testing.T) {
	cmd, step := stepCommand(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	steps, stats := 0, 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "bind to kernel") {
			// The open waits for the program to open its end.
			done := make(chan error, 1)
			go func() {
				f, err := os.OpenFile(step, os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteString("\n")
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the program never read the step of kernel %d", steps+1)
			}
			steps++
		}
		if strings.HasPrefix(line, "gpu_sim_cycle = ") {
			if stats++; stats > steps {
				t.Fatalf("statistics of kernel %d before its step", stats)
			}
		}
	}
	if err := cmd.Wait(); err != nil || stats != 2 {
		t.Fatalf("exit %v after %d kernels' statistics", err, stats)
	}
}

// TestStepsWrittenAheadWait writes both kernels' lines at once, before the
// program reached its first step: none is lost.
func TestStepsWrittenAheadWait(t *testing.T) {
	cmd, step := stepCommand(t)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	f, err := os.OpenFile(step, os.O_WRONLY, 0) // waits for the program's first step
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n\n")
	f.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if n := strings.Count(stdout.String(), "gpu_sim_cycle = "); err != nil || n != 2 {
			t.Fatalf("exit %v after %d kernels' statistics", err, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a step written ahead was lost: the program still waits")
	}
}

// stepCommand is the program on two kernels, held by a named pipe.
func stepCommand(t *testing.T) (*exec.Cmd, string) {
	bin := fakesim.Build(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"gpgpusim.config": "-gpgpu_clock_domains 1000:1000:1000:1000\n",
		"kernel-1.traceg": "-kernel name = _Z1av\n\n#traces format\n",
		"kernel-2.traceg": "-kernel name = _Z1bv\n\n#traces format\n",
		"list.g":          "kernel-1.traceg\nkernel-2.traceg\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step := filepath.Join(dir, "step")
	if err := syscall.Mkfifo(step, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-trace", filepath.Join(dir, "list.g"), "-config", filepath.Join(dir, "gpgpusim.config"))
	cmd.Env = append(os.Environ(), fakesim.EnvStep+"="+step)
	return cmd, step
}

// TestProgressBytes: FAKESIM_PROGRESS_BYTES adds about that many bytes of
// progress lines before each kernel's statistics, which still come.
func TestProgressBytes(t *testing.T) {
	cmd, _ := stepCommand(t)
	cmd.Env = append(os.Environ(), fakesim.EnvProgress+"=100000")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	progress, stats := 0, 0
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "GPGPU-Sim uArch: cycles simulated: "):
			progress += len(line) + 1
		case strings.HasPrefix(line, "gpu_sim_cycle = "):
			stats++
			if progress < stats*100000 || progress > stats*(100000+200) {
				t.Fatalf("%d bytes of progress lines before kernel %d's statistics, want about %d", progress, stats, stats*100000)
			}
		}
	}
	if stats != 2 || !strings.Contains(string(out), "exit detected") {
		t.Fatalf("%d kernels' statistics:\n%.2000s", stats, out)
	}
}

// TestStepLaunchHoldsTheNextLaunch: with FAKESIM_STEP_LAUNCH a kernel
// after the first takes a step before its launch too: two kernels take
// three steps, and of three written ahead none is left in the pipe
// (without it, two steps run both kernels and one is left).
func TestStepLaunchHoldsTheNextLaunch(t *testing.T) {
	for _, launches := range []bool{false, true} {
		cmd, step := stepCommand(t)
		if launches {
			cmd.Env = append(cmd.Env, fakesim.EnvStepLaunch+"=1")
		}
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Held open until the end: the pipe keeps what the program left.
		f, err := os.OpenFile(step, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\n\n\n")
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		// A raw descriptor: an os.File of a FIFO waits for data.
		fd, err := syscall.Open(step, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := syscall.Read(fd, make([]byte, 8))
		n = max(n, 0) // -1 with EAGAIN: nothing left
		syscall.Close(fd)
		f.Close()
		want := 1
		if launches {
			want = 0
		}
		if stats := strings.Count(stdout.String(), "gpu_sim_cycle = "); n != want || stats != 2 {
			t.Errorf("FAKESIM_STEP_LAUNCH %v: %d kernels' statistics, %d steps left, want 2 and %d", launches, stats, n, want)
		}
	}
}
