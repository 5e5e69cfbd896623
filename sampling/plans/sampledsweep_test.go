package plans_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/sampling"
)

// sweepVariant is one cell of the benchmark's design sweep: overrides of
// SM7_QV100 and the core clock its times are at.
type sweepVariant struct {
	name      string
	overrides []string
	clockMHz  float64
}

// BenchmarkSampledSweep: issue 30's goal for sampled design sweeps, on
// the real Accel-Sim (CASCADE_TEST_ACCELSIM_DIR) with the LLM-like trace
// BenchmarkSampledSim builds from the real vecadd-sm61 kernel
// (CASCADE_BENCH_LAUNCHES, default 120). Six variants of SM7_QV100
// (-gpgpu_n_clusters 80 or 40 × core clock 1132, 1455 or 1700 MHz), each
// simulated whole and as the segments of one STEM plan (one launch of
// warm-up); each variant's speedup in simulated time over the shipped
// config (80 clusters, 1132 MHz), sampled (sampling.ProjectSpeedup, with
// its paired interval) against full, and its error. Then the warp
// instructions a sampled sweep of 8 variants simulates on 20,000
// launches of the same shape, against one full run. CASCADE_BENCH_DIR
// keeps the simulations for a rerun.
//
//	CASCADE_TEST_ACCELSIM_DIR=../shared/accelsim CASCADE_TEST_TRACES_DIR=../shared/traces \
//	  go test ./sampling/plans -run '^$' -bench SampledSweep -benchtime 1x -timeout 300m
func BenchmarkSampledSweep(b *testing.B) {
	accel, src, work, launches, parallel := benchSetup(b, 120)
	var variants []sweepVariant
	for _, n := range []int{80, 40} {
		for _, clock := range []float64{1132, 1455, 1700} {
			v := sweepVariant{name: fmt.Sprintf("n%d-%.0fMHz", n, clock), clockMHz: clock,
				overrides: []string{"-gpgpu_n_clusters", fmt.Sprint(n)}}
			if clock != 1132 {
				v.overrides = append(v.overrides, "-gpgpu_clock_domains", fmt.Sprintf("%.1f:%.1f:%.1f:850.0", clock, clock, clock))
			}
			variants = append(variants, v)
		}
	}
	const cfg = "SM7_QV100"
	ctx := context.Background()
	for range b.N {
		trace, list := buildShape(b, ctx, src, work, "default", launches)
		in := readInput(b, trace)
		r := &simRunner{accel: accel, list: list, work: work, sem: make(chan struct{}, parallel)}
		plan := planSTEM(b, in, 1)
		ranges := sampling.Ranges(plan)

		full := make([]*simResult, len(variants))
		sampled := make([]map[int]sampling.Simulated, len(variants))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, v := range variants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				full[i] = r.runVariant(b, cfg, v.name, v.overrides, "full", nil, 0)
			}()
			sampled[i] = map[int]sampling.Simulated{}
			for _, rg := range ranges {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var refs []kernellist.Ref
					for id := rg.Start; id <= rg.End; id++ {
						refs = append(refs, kernellist.Ref{ID: id, Context: cascade.Deref(rg.Context)})
					}
					res := r.runVariant(b, cfg, v.name, v.overrides, fmt.Sprintf("seg-%d-%d", rg.Start, rg.End), refs, rg.Warmup)
					mu.Lock()
					defer mu.Unlock()
					for launch, c := range res.cycles {
						sampled[i][launch] = sampling.Simulated{Cycles: c}
					}
				}()
			}
		}
		wg.Wait()
		if b.Failed() {
			return
		}
		fullTime := func(i int) float64 {
			t := 0.0
			for _, c := range full[i].cycles {
				t += c
			}
			return t / variants[i].clockMHz
		}
		fmt.Fprintf(os.Stdout, "\nSampled design sweep of %s (%d launches), %s, STEM at %g %% with one launch of warm-up: %d of %d launches simulated per variant (%.1f %% of the warp instructions)\n",
			filepath.Base(trace), len(in.Launches), cfg, 100*benchTarget(b), plan.SimulatedLaunches, len(in.Launches), 100*plan.SimulatedFraction)
		fmt.Fprintln(os.Stdout, "| variant | full speedup | sampled speedup (95 % interval) | error of the speedup | inside | significant |")
		fmt.Fprintln(os.Stdout, "|---|---|---|---|---|---|")
		worst := 0.0
		for i, v := range variants {
			fullSpeedup := fullTime(0) / fullTime(i)
			s, err := sampling.ProjectSpeedup(plan, in, sampled[0], sampled[i])
			if err != nil {
				b.Fatal(err)
			}
			// Cycles to time: the clocks are exact, so the interval scales.
			k := v.clockMHz / variants[0].clockMHz
			ratio, lo, hi := s.Ratio*k, s.Low*k, s.High*k
			errPct := 100 * (ratio - fullSpeedup) / fullSpeedup
			worst = math.Max(worst, math.Abs(errPct))
			fmt.Fprintf(os.Stdout, "| %s | %.4f | %.4f [%.4f, %.4f] | %+.3f %% | %v | %v |\n", v.name, fullSpeedup, ratio, lo, hi, errPct,
				lo <= fullSpeedup && fullSpeedup <= hi, i == 0 || lo > 1 || hi < 1)
		}
		b.ReportMetric(worst, "%speedup-err-max")
		sweepWorkSaved(b)
	}
}

// sweepWorkSaved prints the warp instructions a sampled sweep of 8
// variants simulates on a 20,000-launch trace of the benchmark's shape,
// all variants together, against one full run's.
func sweepWorkSaved(b *testing.B) {
	in := llm20k(b)
	p := planSTEM(b, in, 1)
	all := 8 * p.SimulatedInstructions
	fmt.Fprintf(os.Stdout, "\n20,000 launches: one plan, 8 variants simulate %d warp instructions in all (%d each), one full run %d: %.1f× fewer\n",
		all, p.SimulatedInstructions, p.Instructions, float64(p.Instructions)/float64(all))
	b.ReportMetric(float64(p.Instructions)/float64(all), "x-fewer-8-variants-20k")
	if all >= p.Instructions {
		b.Errorf("8 sampled variants simulate %d warp instructions, more than one full run's %d", all, p.Instructions)
	}
}
