package fakesim_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/internal/fakesim"
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
	write("kernel-1.traceg", "-kernel name = _Z1kv\n-binary version = 90\n\n#traces format\n")
	write("kernel-1.trace", "-kernel name = _Z1kv\n")
	ok := write("ok.g", "kernel-1.traceg\n")
	raw := write("raw.g", "kernel-1.trace\n")

	tests := []struct {
		name   string
		args   []string
		mode   string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "ok", args: []string{"-trace", ok, "-config", cfg}, code: 0,
			stdout: []string{"launching kernel name: _Z1kv uid: 1 cuda_stream_id: 0", "gpu_sim_cycle = ", "GPGPU-Sim: *** exit detected ***"}},
		{name: "config missing", args: []string{"-trace", ok, "-config", filepath.Join(dir, "nope.config")}, code: 1,
			stderr: []string{"GPGPU-Sim ** ERROR: Cannot open config file"}},
		{name: "kernel list missing", args: []string{"-trace", filepath.Join(dir, "nope.g"), "-config", cfg}, code: 1,
			stdout: []string{"Unable to open file: " + filepath.Join(dir, "nope.g")}},
		{name: "raw trace is an unsupported file type", args: []string{"-trace", raw, "-config", cfg}, code: fakesim.ExitAbort,
			stderr: []string{"Unsupported file type!"}},
		{name: "unknown mode", args: []string{"-trace", ok}, mode: "sideways", code: 2, stderr: []string{`unknown FAKESIM_MODE "sideways"`}},
		{name: "option without value", args: []string{"-trace"}, code: 1, stderr: []string{"Missing value for option '-trace'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), fakesim.EnvMode+"="+tt.mode)
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
