package plans_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/tracegen"
)

// benchShapes are the LLM-like shapes the sampling benchmarks measure:
// CASCADE_BENCH_SHAPES (names of tracegen.Shapes, comma-separated), else
// decode48, layers3 and noisy.
func benchShapes() []string {
	return strings.Split(envOr("CASCADE_BENCH_SHAPES", "decode48,layers3,noisy"), ",")
}

// shapeConfig is shape's LLMConfig with launches from src.
func shapeConfig(b *testing.B, shape, src string, launches int) tracegen.LLMConfig {
	cfg, ok := tracegen.Shapes[shape]
	if !ok {
		b.Fatalf("CASCADE_BENCH_SHAPES: no shape %q", shape)
	}
	cfg.From, cfg.Launches = src, launches
	return cfg
}

// buildShape writes shape's trace of launches into work/<shape>-<launches>
// and post-processes it, unless it is there already.
func buildShape(b *testing.B, ctx context.Context, src, work, shape string, launches int) (string, *kernellist.List) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", shape, launches))
	lp := filepath.Join(dir, "traces", kernellist.Name)
	if _, err := os.Stat(lp); err != nil {
		if _, err := tracegen.GenerateLLM(ctx, dir, shapeConfig(b, shape, src, launches)); err != nil {
			b.Fatal(err)
		}
		if err := postproc.Postprocess(ctx, filepath.Join(dir, "traces"), postproc.Options{Format: postproc.FormatTraceg}); err != nil {
			b.Fatal(err)
		}
	}
	// The measured durations as tracegen makes them now (its noise was
	// once near constant): a trace built before keeps its kernels, which
	// the simulator reads, and gets the timing anew.
	tmp := b.TempDir()
	cfg := shapeConfig(b, shape, src, launches)
	if _, err := tracegen.GenerateLLM(ctx, tmp, cfg); err != nil {
		b.Fatal(err)
	}
	rt, err := os.ReadFile(filepath.Join(tmp, "real_timing.json"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "real_timing.json"), rt, 0o644)
	}
	if err != nil {
		b.Fatal(err)
	}
	list, err := kernellist.Read(lp)
	if err != nil {
		b.Fatal(err)
	}
	return dir, list
}

// BenchmarkFullSim simulates each shape's trace (CASCADE_BENCH_LAUNCHES,
// default 300) whole with the real Accel-Sim on each config, two at a
// time, and, with CASCADE_BENCH_FIXTURES set to a directory, writes each
// full run's per-launch cycles there as <shape>-<config>.csv: the stored
// full runs sampling's calibration test evaluates plans against
// (sampling/testdata/fullruns). `make bench-sampling` runs it first.
func BenchmarkFullSim(b *testing.B) {
	accel, src, work, launches, parallel := benchSetup(b, 300)
	configs := strings.Split(envOr("CASCADE_BENCH_CONFIGS", "SM6_TITANX,SM7_QV100"), ",")
	ctx := context.Background()
	for range b.N {
		var wg sync.WaitGroup
		sem := make(chan struct{}, parallel)
		for _, shape := range benchShapes() {
			dir, list := buildShape(b, ctx, src, work, shape, launches)
			in := readInput(b, dir)
			r := &simRunner{accel: accel, list: list, work: filepath.Join(work, filepath.Base(dir)), sem: sem}
			for _, cfg := range configs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := r.run(b, cfg, "full", nil, 0)
					fmt.Fprintf(os.Stdout, "%s on %s: %d launches, wall %.0f s\n", shape, cfg, len(res.cycles), res.wall)
					if out := os.Getenv("CASCADE_BENCH_FIXTURES"); out != "" && len(res.cycles) == len(in.Launches) {
						writeFixture(b, filepath.Join(out, shape+"-"+cfg+".csv"), shape, cfg, launchLatency(b, accel, cfg), in, res)
					}
				}()
			}
		}
		wg.Wait()
	}
}

// writeFixture writes a full run's per-launch cycles with the launches'
// planning input: the format sampling's calibration test reads.
func writeFixture(b *testing.B, path, shape, cfg string, latency float64, in sampling.Input, res *simResult) {
	f, err := os.Create(path)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# %s (tracegen.Shapes) of %d launches from vecadd-sm61, simulated whole on %s by the real Accel-Sim (../shared/accelsim); written by make bench-sampling\n",
		shape, len(in.Launches), cfg)
	fmt.Fprintf(w, "# launch_latency %g\n", latency)
	fmt.Fprintln(w, "launch,kernel_id,name,grid_x,block_x,warp_insts,duration_ns,cycles")
	for i, l := range in.Launches {
		fmt.Fprintf(w, "%d,%d,%s,%d,%d,%d,%g,%g\n", i, l.KernelID, l.Name, l.Grid.X, l.Block.X, l.WarpInstructions, l.DurationNs, res.cycles[i])
	}
	if err := w.Flush(); err != nil {
		b.Error(err)
	}
}

// BenchmarkFixtures writes, for each shape and config, the full run that
// BenchmarkFullSim left in CASCADE_BENCH_DIR as a stored full run of
// sampling's calibration test (CASCADE_BENCH_FIXTURES, a directory):
// its launches as planning sees them, their measured durations as
// tracegen makes them now, and each launch's simulated cycles. A full
// run still going, or stopped, gives the prefix it finished: the first K
// launches of a full run are the full run of the trace of K launches (the
// simulator goes through them in order), and one of fewer than
// CASCADE_BENCH_MIN_LAUNCHES (default 100) is left out.
func BenchmarkFixtures(b *testing.B) {
	accel, src, work, launches, _ := benchSetup(b, 300)
	out := os.Getenv("CASCADE_BENCH_FIXTURES")
	if out == "" {
		b.Skip("CASCADE_BENCH_FIXTURES names no directory to write to")
	}
	least := envInt(b, "CASCADE_BENCH_MIN_LAUNCHES", 100)
	configs := strings.Split(envOr("CASCADE_BENCH_CONFIGS", "SM6_TITANX,SM7_QV100"), ",")
	for range b.N {
		for _, shape := range benchShapes() {
			dir := filepath.Join(work, fmt.Sprintf("%s-%d", shape, launches))
			blockInsts, err := sourceBlockInsts(src)
			if err != nil {
				b.Fatal(err)
			}
			ls, err := tracegen.LLMLaunches(shapeConfig(b, shape, src, launches), blockInsts)
			if err != nil {
				b.Fatal(err)
			}
			for _, cfg := range configs {
				cycles, err := logCycles(filepath.Join(dir, cfg, "full", "sim.log"), len(ls))
				if err != nil || len(cycles) < least {
					fmt.Fprintf(os.Stdout, "%s on %s: %d launches simulated (%v): left out\n", shape, cfg, len(cycles), err)
					continue
				}
				in := sampling.Input{}
				for _, l := range ls[:len(cycles)] {
					in.Launches = append(in.Launches, sampling.Launch{KernelID: l.KernelID, Name: l.Name,
						Grid: cascade.Dim3{X: l.Blocks, Y: 1, Z: 1}, Block: cascade.Dim3{X: 1024, Y: 1, Z: 1},
						WarpInstructions: l.Insts, DurationNs: math.Round(l.DurationNs*10) / 10})
				}
				res := &simResult{cycles: map[int]float64{}}
				for i, c := range cycles {
					res.cycles[i] = c
				}
				writeFixture(b, filepath.Join(out, shape+"-"+cfg+".csv"), shape, cfg, launchLatency(b, accel, cfg), in, res)
				fmt.Fprintf(os.Stdout, "%s on %s: %d launches written\n", shape, cfg, len(cycles))
			}
		}
	}
}

// sourceBlockInsts is the warp instructions of a block of the source
// kernel, as tracegen counts them (GenerateLLM's LLMResult.BlockInsts).
func sourceBlockInsts(src string) (int64, error) {
	tmp, err := os.MkdirTemp("", "cascade-blockinsts")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	res, err := tracegen.GenerateLLM(context.Background(), tmp, tracegen.LLMConfig{From: src, Launches: 1})
	if err != nil {
		return 0, err
	}
	return res.BlockInsts, nil
}

// logCycles are the simulated cycles of the launches a full run's log
// finished, in order, up to the first it did not.
func logCycles(path string, launches int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := simlog.Parse(f, launches)
	if err != nil {
		return nil, err
	}
	byID := map[int]float64{}
	for _, k := range p.Kernels() {
		if k.KernelID != nil && !k.Truncated {
			byID[*k.KernelID] = float64(k.SimCycles)
		}
	}
	var out []float64
	for id := 1; ; id++ {
		c, ok := byID[id]
		if !ok {
			return out, nil
		}
		out = append(out, c)
	}
}
