package plans_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/sampling"
)

// BenchmarkSplitSim measures a split full run against the full run in one
// piece with the real Accel-Sim, on the LLM-like trace BenchmarkSampledSim
// builds (CASCADE_BENCH_LAUNCHES, default 300): it simulates the trace
// whole on each config (or reads its stored full run, storedFull: then
// the wall-time ratio is not measured and prints +Inf), then cut by sampling.Split into
// CASCADE_BENCH_SEGMENTS segments (default CASCADE_BENCH_PARALLEL, 2),
// each after a step of warm-up, simulated CASCADE_BENCH_PARALLEL at once,
// and stitches their cycles as a split run does. It prints the total's
// and the worst launch's error and the wall time of the split run (from
// its first segment's start to its last's end) over the full run's.
// `make bench-split` runs it; CASCADE_BENCH_DIR keeps the simulations, and
// a rerun reuses the finished ones (then the split wall time is the
// longest segment's, exact when segments ≤ parallel).
func BenchmarkSplitSim(b *testing.B) {
	accel, src, work, launches, parallel := benchSetup(b, 300)
	configs := strings.Split(envOr("CASCADE_BENCH_CONFIGS", "SM6_TITANX,SM7_QV100"), ",")
	segments := envInt(b, "CASCADE_BENCH_SEGMENTS", parallel)
	ctx := context.Background()
	for range b.N {
		// The shape's trace and full runs are BenchmarkFullSim's.
		trace, list := buildShape(b, ctx, src, work, envOr("CASCADE_BENCH_SHAPE", "decode48"), launches)
		in := readInput(b, trace)
		segs, err := sampling.Split(in, segments, sampling.WarmupStep)
		if err != nil {
			b.Fatal(err)
		}
		r := &simRunner{accel: accel, list: list, work: trace, sem: make(chan struct{}, parallel), warmShare: l2warm.WindowShare}
		fmt.Fprintf(os.Stdout, "\nSplit simulation of %s (%d launches, a step of %d), %d segments %d at once: %v\n",
			filepath.Base(trace), len(in.Launches), sampling.Period(in), len(segs), parallel, segs)
		fmt.Fprintln(os.Stdout, "| config | full cycles | split cycles | total error | worst launch (error) | launches > 2 % | full wall s | split wall s | ratio | sum of segment walls s |")
		fmt.Fprintln(os.Stdout, "|---|---|---|---|---|---|---|---|---|---|")
		for _, cfg := range configs {
			full := storedFull(b, trace, cfg, in) // its wall time not stored: the ratio is then 0
			if full == nil {
				full = r.run(b, cfg, "full", nil, 0) // alone: the serial run's wall
			}
			start := time.Now()
			res := make([]*simResult, len(segs))
			var wg sync.WaitGroup
			for i, s := range segs {
				wg.Go(func() {
					var refs []kernellist.Ref
					for l := s.Start - s.Warmup; l < s.End; l++ {
						refs = append(refs, kernellist.Ref{ID: in.Launches[l].KernelID})
					}
					res[i] = r.run(b, cfg, fmt.Sprintf("split-%d-%d-w%d", s.Start, s.End, s.Warmup), refs, s.Warmup)
				})
			}
			wg.Wait()
			elapsed := time.Since(start).Seconds()
			sum, longest, cached := 0.0, 0.0, false
			for _, s := range res {
				sum += s.wall
				longest = max(longest, s.wall)
				cached = cached || s.cached
			}
			if cached {
				elapsed = longest
			}
			var ft, st, worst float64
			worstAt, over := 0, 0
			for i, s := range segs {
				for l := s.Start; l < s.End; l++ {
					f, c := full.cycles[l], res[i].cycles[l]
					if f <= 0 || c <= 0 {
						b.Fatalf("%s: launch %d: full %v cycles, segment %d %v", cfg, l, f, i+1, c)
					}
					ft += f
					st += c
					e := math.Abs(c-f) / f
					if e > worst {
						worst, worstAt = e, l
					}
					if e > 0.02 {
						over++
					}
				}
			}
			fmt.Fprintf(os.Stdout, "| %s | %.0f | %.0f | %+.4f %% | %d (%.3f %%) | %d | %.1f | %.1f | %.3f | %.1f |\n",
				cfg, ft, st, 100*(st-ft)/ft, worstAt, 100*worst, over, full.wall, elapsed, elapsed/full.wall, sum)
			b.ReportMetric(100*(st-ft)/ft, "total-err-%-"+cfg)
			b.ReportMetric(100*worst, "worst-launch-err-%-"+cfg)
			b.ReportMetric(elapsed/full.wall, "wall-ratio-"+cfg)
		}
	}
}
