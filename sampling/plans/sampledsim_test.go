package plans_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracegen"
)

// BenchmarkSampledSim measures sampled simulation against full simulation
// with the real Accel-Sim (CASCADE_TEST_ACCELSIM_DIR) on LLM-like traces
// of each shape (benchShapes) built from the real vecadd-sm61 kernel
// (CASCADE_TEST_TRACES_DIR): it builds and post-processes each trace,
// simulates it whole on each config (or reads BenchmarkFullSim's), then
// for each warm-up choice plans it with STEM, simulates each of
// sampling.Ranges(plan) as its own simulation of a kernel subset (2 at a
// time), projects with sampling.Project and prints the projection against
// the full result; then the work a 20,000-launch trace of the same shape
// saves. `make bench-sampling` runs it.
//
// CASCADE_BENCH_DIR keeps the work (the trace, every simulation's log): a
// simulation whose log is complete there is not run again.
// CASCADE_BENCH_CONFIGS (default SM6_TITANX,SM7_QV100),
// CASCADE_BENCH_WARMUPS (default step, the default plan's: step is
// sampling.WarmupStep; 0,1,2,6,step for the warm-up table) and CASCADE_BENCH_LAUNCHES
// (default 300) change what is measured, CASCADE_BENCH_PARALLEL (default
// 2) how many simulations run at once.
func BenchmarkSampledSim(b *testing.B) {
	accel, src, work, launches, parallel := benchSetup(b, 300)
	configs := strings.Split(envOr("CASCADE_BENCH_CONFIGS", "SM6_TITANX,SM7_QV100"), ",")
	var warmups []int
	for _, w := range strings.Split(envOr("CASCADE_BENCH_WARMUPS", "step"), ",") {
		if w == "step" {
			warmups = append(warmups, sampling.WarmupStep)
			continue
		}
		n, err := strconv.Atoi(w)
		if err != nil {
			b.Fatalf("CASCADE_BENCH_WARMUPS: %q", w)
		}
		warmups = append(warmups, n)
	}
	ctx := context.Background()
	for range b.N {
		for _, shape := range benchShapes() {
			trace, list := buildShape(b, ctx, src, work, shape, launches)
			in := readInput(b, trace)
			r := &simRunner{accel: accel, list: list, work: trace, sem: make(chan struct{}, parallel)}
			sampledSim(b, r, accel, trace, in, configs, warmups)
		}
		workSaved(b)
	}
}

// sampledSim simulates in's trace whole on each config (or reads the full
// runs BenchmarkFullSim left), then, for each warm-up, its plan's segments,
// and prints the projection against the full result.
func sampledSim(b *testing.B, r *simRunner, accel, trace string, in sampling.Input, configs []string, warmups []int) {
	{

		// The full simulations first, both at once.
		full := map[string]*simResult{}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, cfg := range configs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := storedFull(b, trace, cfg, in)
				if res == nil {
					res = r.run(b, cfg, "full", nil, 0)
				}
				mu.Lock()
				full[cfg] = res
				mu.Unlock()
			}()
		}
		wg.Wait()

		fmt.Fprintf(os.Stdout, "\nSampled simulation of %s (%d launches, %d warp instructions), STEM at %g %%\n",
			filepath.Base(trace), len(in.Launches), totalInsts(in), 100*benchTarget(b))
		fmt.Fprintln(os.Stdout, "| config | warm-up | segments | simulated warp insts (fraction) | full cycles | projected (95 % interval) | error | error beyond latency | inside | full wall s | sampled wall s (2 at once) | sum of segment walls s (longest) | representatives against in context |")
		fmt.Fprintln(os.Stdout, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, cfg := range configs {
			f := full[cfg]
			latency := launchLatency(b, accel, cfg)
			fullTotal := 0.0
			for _, c := range f.cycles {
				fullTotal += c
			}
			for _, w := range warmups {
				plan := planSTEM(b, in, w)
				ranges := sampling.Ranges(plan)
				start := time.Now()
				segs := make([]*simResult, len(ranges))
				var wg sync.WaitGroup
				for i, rg := range ranges {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var refs []kernellist.Ref
						for id := rg.Start; id <= rg.End; id++ {
							refs = append(refs, kernellist.Ref{ID: id, Context: cascade.Deref(rg.Context)})
						}
						segs[i] = r.run(b, cfg, fmt.Sprintf("seg-%d-%d", rg.Start, rg.End), refs, rg.Warmup)
					}()
				}
				wg.Wait()
				elapsed := time.Since(start).Seconds()
				sim := map[int]sampling.Simulated{}
				segWall, longest := 0.0, 0.0
				cached := false
				for _, s := range segs {
					segWall += s.wall
					longest = max(longest, s.wall)
					cached = cached || s.cached
					for launch, c := range s.cycles {
						sim[launch] = sampling.Simulated{Cycles: c}
					}
				}
				// Each representative simulated here against itself in the
				// full simulation.
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, st := range plan.Strata {
					for _, rp := range st.Representatives {
						if c, ok := f.cycles[rp.Launch]; ok && c > 0 {
							d := sim[rp.Launch].Cycles/c - 1
							lo, hi = min(lo, d), max(hi, d)
						}
					}
				}
				warming := sampling.Cold
				if os.Getenv("CASCADE_BENCH_WARMING") == "1" {
					warming = sampling.L2Warmed
				}
				pr, err := sampling.ProjectWith(plan, in, sim, warming)
				if err != nil {
					b.Fatal(err)
				}
				fixed := latency * float64(len(in.Launches))
				errTot := (pr.Total - fullTotal) / fullTotal
				errBeyond := (pr.Total - fullTotal) / (fullTotal - fixed)
				inside := fullTotal >= pr.Low && fullTotal <= pr.High
				wall := fmt.Sprintf("%.0f", elapsed)
				if cached {
					// Some were simulated before: their walls, run 2 at
					// a time longest first.
					wall = fmt.Sprintf("≈%.0f (reused)", makespan(segs, 2))
				}
				fmt.Fprintf(os.Stdout, "| %s | %s | %d | %d (%.2f %%) | %.0f | %.0f [%.0f, %.0f] | %+.2f %% | %+.2f %% | %v | %.0f | %s | %.0f (%.0f) | %+.1f to %+.1f %% |\n",
					cfg, warmName(w, plan), len(ranges), plan.SimulatedInstructions, 100*plan.SimulatedFraction,
					fullTotal, pr.Total, pr.Low, pr.High, 100*errTot, 100*errBeyond, inside, f.wall, wall, segWall, longest, 100*lo, 100*hi)
				b.ReportMetric(100*math.Abs(errTot), fmt.Sprintf("%%err-%s-%s-w%d", filepath.Base(trace), cfg, w))
			}
		}
	}
}

// benchSetup is what the real-simulator benchmarks run on: the checkout
// (CASCADE_TEST_ACCELSIM_DIR), the real trace their LLM-like traces are
// built from (CASCADE_TEST_TRACES_DIR), where they keep their work
// (CASCADE_BENCH_DIR, else a temporary directory), how many launches
// (CASCADE_BENCH_LAUNCHES, else launches) and how many simulations at
// once (CASCADE_BENCH_PARALLEL, else 2).
func benchSetup(b *testing.B, launches int) (accel, src, work string, n, parallel int) {
	accel = testkit.RealAccelSim(b)
	src = testkit.RealTrace(b, "vecadd-sm61")
	if work = os.Getenv("CASCADE_BENCH_DIR"); work == "" {
		work = b.TempDir()
	}
	return accel, src, work, envInt(b, "CASCADE_BENCH_LAUNCHES", launches), envInt(b, "CASCADE_BENCH_PARALLEL", 2)
}

// workSaved prints what a 20,000-launch trace of the same shape saves:
// planning needs only its stats and timing.
func workSaved(b *testing.B) {
	const n = 20000
	in := llm20k(b)
	fmt.Fprintf(os.Stdout, "\nWork saved on a %d-launch trace of the same shape (%d warp instructions), STEM at %g %%\n", n, totalInsts(in), 100*benchTarget(b))
	fmt.Fprintln(os.Stdout, "| warm-up | representatives | simulated launches | simulated warp insts | fewer |")
	fmt.Fprintln(os.Stdout, "|---|---|---|---|---|")
	for _, w := range []int{0, 1, 2, 6, sampling.WarmupStep} {
		p := planSTEM(b, in, w)
		fmt.Fprintf(os.Stdout, "| %s | %d | %d | %d | %.0f× |\n", warmName(w, p), p.Samples, p.SimulatedLaunches, p.SimulatedInstructions,
			float64(p.Instructions)/float64(p.SimulatedInstructions))
		b.ReportMetric(float64(p.Instructions)/float64(p.SimulatedInstructions), fmt.Sprintf("x-fewer-20k-w%d", w))
	}
}

// llm20k is the input of a 20,000-launch LLM-like trace of the
// benchmark's shape: planning needs only its stats and timing.
func llm20k(b *testing.B) sampling.Input {
	ls, err := tracegen.LLMLaunches(tracegen.LLMConfig{Launches: 20000}, 736)
	if err != nil {
		b.Fatal(err)
	}
	in := sampling.Input{Launches: make([]sampling.Launch, len(ls))}
	for i, l := range ls {
		in.Launches[i] = sampling.Launch{
			KernelID: l.KernelID, Name: l.Name, Grid: cascade.Dim3{X: l.Blocks, Y: 1, Z: 1}, Block: cascade.Dim3{X: 1024, Y: 1, Z: 1},
			WarpInstructions: l.Insts, DurationNs: l.DurationNs,
		}
	}
	return in
}

func planSTEM(b *testing.B, in sampling.Input, warmup int) sampling.Plan {
	m, err := sampling.New(cascade.SamplingSTEM, in, warmup)
	if err != nil {
		b.Fatal(err)
	}
	p, err := m.Plan(in, sampling.Target{Error: benchTarget(b)})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchTarget is the plans' error bound: CASCADE_BENCH_TARGET (0.05 for
// 5 %), or sampling.DefaultError.
func benchTarget(b *testing.B) float64 {
	v := os.Getenv("CASCADE_BENCH_TARGET")
	if v == "" {
		return sampling.DefaultError
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0 && f < 1) {
		b.Fatalf("CASCADE_BENCH_TARGET=%q: want a fraction, 0.05 for 5 %%", v)
	}
	return f
}

func totalInsts(in sampling.Input) int64 {
	s := int64(0)
	for _, l := range in.Launches {
		s += l.WarpInstructions
	}
	return s
}

// readInput is what plans.Service.Input makes of the trace: its stats
// with the measured durations of its real timing.
func readInput(b *testing.B, dir string) sampling.Input {
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		b.Fatal(err)
	}
	var w tracedir.Warnings
	ks, err := tree.ReadKernels(&w)
	if err != nil || len(w.List) > 0 {
		b.Fatal(err, w.List)
	}
	rt, err := tracedir.ReadRealTiming(filepath.Join(dir, "real_timing.json"))
	if err != nil {
		b.Fatal(err)
	}
	dur := map[int]float64{}
	for _, r := range rt.Rows {
		if r.DurationNs != nil {
			dur[r.KernelID] = *r.DurationNs
		}
	}
	in := sampling.Input{}
	for _, k := range ks {
		in.Launches = append(in.Launches, sampling.Launch{
			KernelID: k.KernelID, Name: k.Name, Grid: k.Grid(), Block: k.Block(),
			WarpInstructions: cascade.Deref(k.Instructions), DurationNs: dur[k.KernelID],
		})
	}
	return in
}

// launchLatency is cfg's -gpgpu_kernel_launch_latency.
func launchLatency(b *testing.B, accel, cfg string) float64 {
	data, err := os.ReadFile(filepath.Join(accel, "gpu-simulator/gpgpu-sim/configs/tested-cfgs", cfg, "gpgpusim.config"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "-gpgpu_kernel_launch_latency" {
			v, err := strconv.ParseFloat(f[1], 64)
			if err == nil {
				return v
			}
		}
	}
	return 0
}

// simRunner runs the real simulator on kernel subsets of list, at most
// cap(sem) at once, each in work/<config>/<name>.
type simRunner struct {
	accel string
	list  *kernellist.List
	work  string
	sem   chan struct{}
	// warmShare is the L2 warming window's share of the L2
	// (CASCADE_BENCH_WARMING=1) as the server takes it for these
	// segments: 0 for a sampled run's (l2warm.SampledWindowShare),
	// l2warm.WindowShare for a split run's. CASCADE_BENCH_WARM_SHARE
	// overrides it.
	warmShare float64
}

// simResult is a simulation's cycles by launch position (kernel id − 1:
// the trace is single-context) and its wall time.
type simResult struct {
	cycles map[int]float64
	wall   float64
	cached bool
}

// run simulates the kernels refs names (all for nil) on cfg, or reads the
// result of an earlier run from its directory.
func (r *simRunner) run(b *testing.B, cfg, name string, refs []kernellist.Ref, warmup int) *simResult {
	return r.runVariant(b, cfg, "", nil, name, refs, warmup)
}

// runVariant is run under a variant of cfg: overrides given after the
// config files, its work in work/<config>/<variant>/<name>.
func (r *simRunner) runVariant(b *testing.B, cfg, variant string, overrides []string, name string, refs []kernellist.Ref, warmup int) *simResult {
	dir := filepath.Join(r.work, cfg, variant, name)
	warming := refs != nil && os.Getenv("CASCADE_BENCH_WARMING") == "1"
	share := r.warmShare
	if share == 0 {
		share = l2warm.SampledWindowShare
	}
	if v := os.Getenv("CASCADE_BENCH_WARM_SHARE"); v != "" {
		var err error
		if share, err = strconv.ParseFloat(v, 64); err != nil || share <= 0 {
			b.Fatalf("CASCADE_BENCH_WARM_SHARE=%q: want a positive share of the L2", v)
		}
	}
	if warming {
		dir += "-l2warm" + strconv.FormatFloat(share, 'g', -1, 64)
		if warmup > 0 {
			dir += "-after" + strconv.Itoa(warmup) // warm-up kernels' own lines left to them
		}
	}
	if res, ok := readDone(dir); ok {
		return res
	}
	r.sem <- struct{}{}
	defer func() { <-r.sem }()
	if refs == nil {
		for _, k := range r.list.Kernels() {
			refs = append(refs, k.Kernel)
		}
	}
	os.RemoveAll(dir)
	sub, err := kernellist.WriteSubset(r.list, dir, refs)
	if err != nil {
		b.Error(err)
		return &simResult{}
	}
	if err := copyConfig(r.accel, cfg, dir); err != nil {
		b.Error(err)
		return &simResult{}
	}
	if warming {
		if sub, err = warmSegment(r.list, dir, sub, refs, warmup, share); err != nil {
			b.Error(err)
			return &simResult{}
		}
	}
	res, err := simulate(r.accel, dir, sub, overrides)
	if err != nil {
		b.Error(err)
		if res == nil {
			return &simResult{}
		}
	}
	return res
}

// copyConfig copies the files of the checkout's config cfg (both halves)
// into dir, where the simulator runs.
func copyConfig(accel, cfg, dir string) error {
	for _, f := range []string{"gpu-simulator/gpgpu-sim/configs/tested-cfgs/" + cfg, "gpu-simulator/configs/tested-cfgs/" + cfg} {
		des, err := os.ReadDir(filepath.Join(accel, f))
		if err != nil {
			return err
		}
		for _, de := range des {
			data, err := os.ReadFile(filepath.Join(accel, f, de.Name()))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, de.Name()), data, 0o644)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// simulate runs the real simulator in dir on its list sub (the config's
// files copied in, overrides after them), writes its log to sim.log and
// its wall time to wall (readDone's), and returns its cycles (with an
// error too when the wall time could not be written).
func simulate(accel, dir string, sub *kernellist.List, overrides []string) (*simResult, error) {
	logf, err := os.Create(filepath.Join(dir, "sim.log"))
	if err != nil {
		return nil, err
	}
	args := append([]string{"-n", "10", filepath.Join(accel, "gpu-simulator/bin/release/accel-sim.out"),
		"-trace", "./" + kernellist.Name, "-config", "gpgpusim.config", "-config", "trace.config"}, overrides...)
	cmd := exec.Command("nice", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(accel, "gpu-simulator/gpgpu-sim/lib/gcc-12.2.0/cuda-11080/release"))
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	logf.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	res, err := parseLog(filepath.Join(dir, "sim.log"), traceKernels(sub))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	res.wall = wall
	return res, os.WriteFile(filepath.Join(dir, "wall"), []byte(strconv.FormatFloat(wall, 'f', 1, 64)), 0o644)
}

// readDone returns the result an earlier run left in dir.
func readDone(dir string) (*simResult, bool) {
	w, err := os.ReadFile(filepath.Join(dir, "wall"))
	if err != nil {
		return nil, false
	}
	sub, err := kernellist.Read(filepath.Join(dir, kernellist.Name))
	if err != nil {
		return nil, false
	}
	n := traceKernels(sub)
	res, err := parseLog(filepath.Join(dir, "sim.log"), n)
	if err != nil {
		return nil, false
	}
	res.wall, _ = strconv.ParseFloat(strings.TrimSpace(string(w)), 64)
	res.cached = true
	return res, true
}

func parseLog(path string, expected int) (*simResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := simlog.Parse(io.Reader(f), expected) // it leaves out a warming kernel's result
	if err != nil {
		return nil, err
	}
	ks := p.Kernels()
	if len(ks) != expected {
		return nil, fmt.Errorf("%s: %d kernels simulated, want %d", path, len(ks), expected)
	}
	res := &simResult{cycles: map[int]float64{}}
	for _, k := range ks {
		if k.KernelID == nil || k.Truncated {
			return nil, fmt.Errorf("%s: kernel %s without an id or truncated", path, k.TraceFile)
		}
		res.cycles[*k.KernelID-1] = float64(k.SimCycles)
	}
	return res, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(b *testing.B, k string, def int) int {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", k, v)
	}
	return n
}

// warmName names a warm-up choice as the tables do.
func warmName(w int, p sampling.Plan) string {
	if w == sampling.WarmupStep {
		return fmt.Sprintf("step (%d)", p.Warmup)
	}
	return strconv.Itoa(w)
}

// makespan is how long the simulations of segs take run k at a time,
// longest first, each as long as it took.
func makespan(segs []*simResult, k int) float64 {
	walls := make([]float64, len(segs))
	for i, s := range segs {
		walls[i] = s.wall
	}
	slices.Sort(walls)
	slices.Reverse(walls)
	lanes := make([]float64, k)
	for _, w := range walls {
		lanes[slices.Index(lanes, slices.Min(lanes))] += w
	}
	return slices.Max(lanes)
}

// traceKernels counts the trace's kernels in a segment's list: all but a
// warming kernel.
func traceKernels(l *kernellist.List) int {
	return len(slices.DeleteFunc(l.Kernels(), func(k kernellist.Command) bool { return l2warm.IsTrace(k.TraceFile) }))
}
