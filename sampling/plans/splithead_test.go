package plans_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/sampling"
)

// BenchmarkSplitHead simulates the head of one segment of a split run
// with the real Accel-Sim under variants of its warm-up and warming, and
// prints each launch's cycles against the stored full run
// (../testdata/fullruns): a segment's first launches do not depend on its
// later ones, so a head of a dozen launches answers in a minute or two
// what the whole segment would in ten. CASCADE_BENCH_SHAPE (default
// noisy), CASCADE_BENCH_CONFIGS (one config, default SM7_QV100) and
// CASCADE_BENCH_SEGMENTS (default 2) choose the split (sampling.Split, a
// step of warm-up); CASCADE_DIAG_SEGMENT (default 2, counted from 1) the
// segment, CASCADE_DIAG_HEAD (default 12) how many of its launches, and
// CASCADE_DIAG_VARIANTS (comma-separated, default cur) the variants
// diagRun names. Kept under CASCADE_BENCH_DIR/<shape>-<n>/<config>/diag.
// docs/sampling-benchmarks.md ("Split runs") has what it found: the
// segment's block placement, not its L2, set noisy's worst launch.
func BenchmarkSplitHead(b *testing.B) {
	accel, src, work, launches, parallel := benchSetup(b, 300)
	cfg := envOr("CASCADE_BENCH_CONFIGS", "SM7_QV100")
	shape := envOr("CASCADE_BENCH_SHAPE", "noisy")
	head := envInt(b, "CASCADE_DIAG_HEAD", 12)
	seg := envInt(b, "CASCADE_DIAG_SEGMENT", 2) - 1
	variants := strings.Split(envOr("CASCADE_DIAG_VARIANTS", "cur"), ",")
	ctx := context.Background()
	trace, list := buildShape(b, ctx, src, work, shape, launches)
	in := readInput(b, trace)
	segs, err := sampling.Split(in, envInt(b, "CASCADE_BENCH_SEGMENTS", 2), sampling.WarmupStep)
	if err != nil {
		b.Fatal(err)
	}
	full := storedFull(b, trace, cfg, in)
	if full == nil {
		b.Fatal("no stored full run")
	}
	s := segs[seg]
	end := min(s.Start+head, s.End)
	fmt.Printf("segments %v; head %d-%d\n", segs, s.Start, end)
	sem := make(chan struct{}, parallel)
	res := make([]map[int]float64, len(variants))
	var wg sync.WaitGroup
	for i, v := range variants {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res[i] = diagRun(b, accel, list, filepath.Join(trace, cfg, "diag", fmt.Sprintf("%d-%d-%s", s.Start, end, v)), cfg, in, s.Start, end, s.Warmup, v)
		})
	}
	wg.Wait()
	fmt.Printf("| launch | name | full |")
	for _, v := range variants {
		fmt.Printf(" %s |", v)
	}
	fmt.Println()
	worst := make([]float64, len(variants))
	for l := s.Start; l < end; l++ {
		f := full.cycles[l]
		fmt.Printf("| %d | %s | %.0f |", l, in.Launches[l].Name, f)
		for i := range variants {
			c := res[i][l]
			e := 100 * (c - f) / f
			worst[i] = max(worst[i], math.Abs(e))
			fmt.Printf(" %.0f (%+.2f %%) |", c, e)
		}
		fmt.Println()
	}
	fmt.Printf("| worst | | |")
	for i := range variants {
		fmt.Printf(" %.2f %% |", worst[i])
	}
	fmt.Println()
}

// diagRun simulates launches start−warmup to end−1 of in into dir, and
// returns their cycles. The variant, parts joined by '+':
//
//	cur       the server's warming (l2warm.PlanAfterWarmup, WindowShare)
//	old       the warm-up's own lines warmed too (Plan, before 736f779)
//	none      no warming kernel
//	wN        N launches of warm-up instead of warmup
//	shareX    a window of X × the L2
//	dirty     cur, and the lines the warm-up touches that the window
//	          wrote, warmed by stores (dirty, as in the full run's L2)
//	align     the warming kernel padded with blocks that only exit, so
//	          that as many blocks as in the full run (modulo the SMs) were
//	          issued before launch start: the simulator gives a kernel's
//	          blocks to the SMs after the one it gave the last block to
//	          (gpgpu_sim::issue_block2core), so the segment's launches run
//	          on the full run's SMs (exact while no kernel before start
//	          has more blocks than the GPU holds at once)
//	padN      a kernel of N blocks that only exit first (one line loaded):
//	          every later block N SMs on; on segment 0 a full run shifted
func diagRun(b *testing.B, accel string, list *kernellist.List, dir, cfg string, in sampling.Input, start, end, warmup int, variant string) map[int]float64 {
	mode, share, dirty, align, pad := "cur", l2warm.WindowShare, false, false, 0
	for _, p := range strings.Split(variant, "+") {
		switch {
		case p == "cur", p == "old", p == "none":
			mode = p
		case p == "dirty":
			dirty = true
		case p == "align":
			align = true
		case strings.HasPrefix(p, "pad"):
			n, err := strconv.Atoi(p[3:])
			if err != nil {
				b.Fatal(variant)
			}
			pad = n
		case strings.HasPrefix(p, "w"):
			n, err := strconv.Atoi(p[1:])
			if err != nil {
				b.Fatal(variant)
			}
			warmup = n
		case strings.HasPrefix(p, "share"):
			x, err := strconv.ParseFloat(p[5:], 64)
			if err != nil {
				b.Fatal(variant)
			}
			share = x
		default:
			b.Fatal(variant)
		}
	}
	if res, ok := readDone(dir); ok {
		return res.cycles
	}
	var refs []kernellist.Ref
	for l := start - warmup; l < end; l++ {
		refs = append(refs, kernellist.Ref{ID: in.Launches[l].KernelID})
	}
	os.RemoveAll(dir)
	sub, err := kernellist.WriteSubset(list, dir, refs)
	if err != nil {
		b.Fatal(err)
	}
	if err := copyConfig(accel, cfg, dir); err != nil {
		b.Fatal(err)
	}
	if mode != "none" {
		l2, err := l2warm.L2(simconfig.LoadOne(dir))
		if err != nil {
			b.Fatal(err)
		}
		w := warmup
		if mode == "old" {
			w = 0
		}
		plan, err := l2warm.PlanAfterWarmup(footprints, list, refs, w, uint64(float64(l2.Bytes)*share))
		if err != nil {
			b.Fatal(err)
		}
		if dirty {
			plan = addDirtyWarmup(b, list, refs, warmup, uint64(float64(l2.Bytes)*share), plan)
		}
		fmt.Printf("%s: warming %d lines, %d dirty, %d launches\n", variant, plan.Lines.Count(), plan.Dirty.Count(), plan.Launches)
		if len(plan.Lines) > 0 {
			name, err := l2warm.WriteKernel(dir, plan, sub.TracePath(sub.Kernels()[0]))
			if err != nil {
				b.Fatal(err)
			}
			if align {
				// The full run's next SM before launch start: block
				// issue goes round the SMs from the last one given a
				// block, 79 (QV100's 80) before the first kernel.
				n := smCount(b, dir)
				full, seg := 0, 0
				for l := 0; l < start; l++ {
					full += in.Launches[l].Grid.X
				}
				for l := start - warmup; l < start; l++ {
					seg += in.Launches[l].Grid.X
				}
				padBlocks(b, filepath.Join(dir, name), ((full-seg)%n+n)%n, n)
			}
			if sub, err = kernellist.PutFirst(sub, name); err != nil {
				b.Fatal(err)
			}
		}
	}
	if pad > 0 {
		// A kernel of pad blocks that only exit (and load one line no
		// launch touches): every later block lands pad SMs further on.
		w := l2warm.Warm{Order: []l2warm.Lines{{{Lo: 0, Hi: 1}}}, Lines: l2warm.Lines{{Lo: 0, Hi: 1}}}
		name, err := l2warm.WriteKernel(dir, w, sub.TracePath(sub.Kernels()[0]))
		if err != nil {
			b.Fatal(err)
		}
		padBlocks(b, filepath.Join(dir, name), 1+pad, 1)
		if sub, err = kernellist.PutFirst(sub, name); err != nil {
			b.Fatal(err)
		}
	}
	res, err := simulate(accel, dir, sub, nil)
	if err != nil {
		b.Fatal(err)
	}
	return res.cycles
}

// smCount is the SMs of the config in dir: clusters × cores a cluster.
func smCount(b *testing.B, dir string) int {
	cfg := simconfig.LoadOne(dir)
	n := 1
	for _, o := range []string{"-gpgpu_n_clusters", "-gpgpu_n_cores_per_cluster"} {
		v, ok, err := simconfig.Value(cfg, o)
		k, err2 := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || !ok || err2 != nil || k < 1 {
			b.Fatalf("%s: %s %q: %v", dir, o, v, err)
		}
		n *= k
	}
	return n
}

// addDirtyWarmup adds to plan the lines the warm-up touches that the
// window before it wrote (dirty in the full run's L2), as stores.
func addDirtyWarmup(b *testing.B, list *kernellist.List, refs []kernellist.Ref, warmup int, window uint64, plan l2warm.Warm) l2warm.Warm {
	all, err := l2warm.PlanAfterWarmup(footprints, list, refs[:warmup], 0, window)
	if err != nil {
		b.Fatal(err)
	}
	add := all.Dirty
	plan.Order = append([]l2warm.Lines{add}, plan.Order...)
	plan.Lines = l2warm.Union(plan.Lines, add)
	plan.Dirty = l2warm.Union(plan.Dirty, add)
	return plan
}

// padBlocks appends to the warming kernel at path blocks whose warps
// only exit, until it has the least count ≥ its own that is want modulo n.
func padBlocks(b *testing.B, path string, want, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	t := string(data)
	var have int
	fmt.Sscanf(t[strings.Index(t, "-grid dim = (")+len("-grid dim = ("):], "%d", &have)
	total := want
	for total < have {
		total += n
	}
	t = strings.Replace(t, fmt.Sprintf("-grid dim = (%d,1,1)", have), fmt.Sprintf("-grid dim = (%d,1,1)", total), 1)
	var sb strings.Builder
	sb.WriteString(t)
	for blk := have; blk < total; blk++ {
		fmt.Fprintf(&sb, "\n#BEGIN_TB\n\nthread block = %d,0,0\n\n", blk)
		for w := 0; w < 32; w++ {
			fmt.Fprintf(&sb, "warp = %d\ninsts = 1\n0050 ffffffff 0 EXIT 0 0\n\n", w)
		}
		sb.WriteString("#END_TB\n")
	}
	fmt.Printf("%s: %d blocks, padded to %d\n", path, have, total)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}
