// Package simprobe asks an Accel-Sim simulator what it can do, by running
// it the way a run does, on inputs too small to cost anything:
//
//   - whether it accepts a config: GPGPU-Sim reads every option before it
//     opens the kernel list, so a run on a list that does not exist ends at
//     once, either "Unable to open file" (the config was accepted) or with
//     the option it refused ("Unknown Option: '-smem_latency'");
//   - which binary versions its ISA tables decode: a one-instruction
//     kernel per version, which it simulates in about 0.1 s or refuses with
//     "unsupported binary version: N" (and exit 0).
//
// It owns nothing but the probe files it writes under the directory it is
// given; what to do with the answers (refuse a launch, mark a config
// unusable) is its callers'.
package simprobe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/internal/proc"
)

// Simulator is how to run the simulator: its command and the environment
// it needs (LD_LIBRARY_PATH with GPGPU-Sim's libcudart.so).
type Simulator struct {
	Command []string
	Env     []string
}

// Candidates are the binary versions [Simulator.BinaryVersions] tries:
// the compute capabilities NVIDIA has shipped, as NVBit writes them
// (major*10 + minor).
var Candidates = []int{30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121}

// EnvProbe is set (to 1) in the environment of every simulator a probe
// runs: a stand-in simulator tells probes from runs by it.
const EnvProbe = "CASCADE_SIM_PROBE"

// missingList is the kernel list CheckConfig names, which never exists.
const missingList = "cascade-probe-no-such-kernelslist.g"

// CheckConfig runs the simulator in dir, where the config's files are,
// with configArgs ("-config gpgpusim.config -config trace.config"). It
// returns "" when the simulator accepts the config, else its decisive line
// ("GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"). An error means
// the simulator could not be run at all.
func (s Simulator) CheckConfig(ctx context.Context, dir string, configArgs []string) (refusal string, err error) {
	refusal, _, err = s.Check(ctx, dir, configArgs)
	return refusal, err
}

// Check is CheckConfig that also returns the build lines the simulator
// printed ("Accel-Sim [build accelsim-commit-73f9fac_...]", "GPGPU-Sim
// Simulator Version 4.2.0 [build ...]"), trimmed; nil when it printed none.
func (s Simulator) Check(ctx context.Context, dir string, configArgs []string) (refusal string, build []string, err error) {
	list := filepath.Join(dir, missingList)
	log := filepath.Join(dir, "cascade-probe-config.log")
	defer os.Remove(log)
	res, err := s.run(ctx, dir, log, list, configArgs)
	if err != nil {
		return "", nil, err
	}
	out, err := os.ReadFile(log)
	if err != nil {
		return "", nil, err
	}
	p, _ := simlog.Parse(strings.NewReader(string(out)), 1)
	build = p.Build()
	if strings.Contains(string(out), "Unable to open file: "+list) {
		return "", build, nil
	}
	o := p.Outcome(simlog.Exit{Code: res.ExitCode, Signal: res.Signal})
	if o.Line != "" {
		return o.Line, build, nil
	}
	return fmt.Sprintf("the simulator stopped (%s) before it opened the kernel list", res), build, nil
}

// endOfOptions is an option no simulator knows, given after the options
// CheckOptions checks: GPGPU-Sim reads its options in order and stops at
// the first it refuses, so a refusal of this one means every option
// before it was taken, and costs the ~30 ms of reading them rather than
// the second or more it takes to build the simulated GPU.
const endOfOptions = "-cascade_end_of_options"

// CheckOptions asks the simulator, run in dir where the config's files
// are, whether it takes the options of args ("-config gpgpusim.config
// -config trace.config -gpgpu_n_clusters 64"): their names, and values
// it can parse. It returns "" when it takes them all, else its decisive
// line ("GPGPU-Sim ** ERROR: Unknown Option: '-gmem_skip_L1D'",
// "... Cannot parse value 'abc' for option '-gpgpu_n_clusters'."). A
// value it parses but the simulated GPU cannot be built with (an unknown
// scheduler's name) is not seen: the run fails at its start, saying so.
func (s Simulator) CheckOptions(ctx context.Context, dir string, args []string) (refusal string, err error) {
	list := filepath.Join(dir, missingList)
	log := filepath.Join(dir, "cascade-probe-options.log")
	defer os.Remove(log)
	res, err := s.run(ctx, dir, log, list, append(slices.Clone(args), endOfOptions, "1"))
	if err != nil {
		return "", err
	}
	out, err := os.ReadFile(log)
	if err != nil {
		return "", err
	}
	if strings.Contains(string(out), "'"+endOfOptions+"'") || strings.Contains(string(out), "Unable to open file: "+list) {
		return "", nil
	}
	p, _ := simlog.Parse(strings.NewReader(string(out)), 1)
	if o := p.Outcome(simlog.Exit{Code: res.ExitCode, Signal: res.Signal}); o.Line != "" {
		return o.Line, nil
	}
	return fmt.Sprintf("the simulator stopped (%s) before it read every option", res), nil
}

// BinaryVersions runs a one-instruction kernel of each candidate binary
// version under the config in dir (see CheckConfig), two at a time, and
// returns those the simulator decodes, in order.
func (s Simulator) BinaryVersions(ctx context.Context, dir string, configArgs []string, candidates []int) ([]int, error) {
	var (
		mu    sync.Mutex
		ok    []int
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, 2)
	)
	for _, v := range candidates {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			decodes, err := s.decodes(ctx, dir, configArgs, v)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && first == nil:
				first = err
			case decodes:
				ok = append(ok, v)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	slices.Sort(ok)
	return ok, nil
}

// decodes simulates a one-instruction kernel of binary version v.
func (s Simulator) decodes(ctx context.Context, dir string, configArgs []string, v int) (bool, error) {
	sub := filepath.Join(dir, fmt.Sprintf("cascade-probe-%d", v))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return false, err
	}
	defer os.RemoveAll(sub)
	// Kernel lines of a kernelslist.g must start with "kernel".
	if err := os.WriteFile(filepath.Join(sub, "kernel-1.traceg"), []byte(probeKernel(v)), 0o644); err != nil {
		return false, err
	}
	list := filepath.Join(sub, "kernelslist.g")
	if err := os.WriteFile(list, []byte("kernel-1.traceg\n"), 0o644); err != nil {
		return false, err
	}
	log := filepath.Join(sub, "probe.log")
	res, err := s.run(ctx, dir, log, list, configArgs)
	if err != nil {
		return false, err
	}
	f, err := os.Open(log)
	if err != nil {
		return false, err
	}
	defer f.Close()
	p, err := simlog.Parse(f, 1)
	if err != nil {
		return false, err
	}
	o := p.Outcome(simlog.Exit{Code: res.ExitCode, Signal: res.Signal})
	switch {
	case o.Succeeded:
		return true, nil
	case o.Failure == simlog.FailureUnsupportedBinary:
		return false, nil
	}
	return false, fmt.Errorf("probe of binary version %d: %s", v, o.Reason)
}

func (s Simulator) run(ctx context.Context, dir, log, list string, configArgs []string) (proc.Result, error) {
	args := append(append(append([]string(nil), s.Command...), "-trace", list), configArgs...)
	env := append(append([]string(nil), s.Env...), EnvProbe+"=1")
	res, err := proc.Run(ctx, proc.Cmd{Args: args, Dir: dir, Env: env, Log: log})
	if err != nil {
		return res, fmt.Errorf("run %s: %w", s.Command[0], err)
	}
	return res, nil
}

// probeKernel is a post-processed (.traceg) kernel of one warp that runs
// one EXIT, with the given binary version in its header.
func probeKernel(version int) string {
	return fmt.Sprintf(`-kernel name = cascade_probe
-kernel id = 1
-grid dim = (1,1,1)
-block dim = (32,1,1)
-shmem = 0
-nregs = 1
-binary version = %d
-cuda stream id = 0
-shmem base_addr = 0x00007f0000000000
-local mem base_addr = 0x00007f1000000000
-nvbit version = 1.5.3
-accelsim tracer version = 3

#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

#BEGIN_TB

thread block = 0,0,0

warp = 0
insts = 1
0000 ffffffff 0 EXIT 0 0 

#END_TB
`, version)
}
