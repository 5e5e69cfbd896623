package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// BenchmarkRealTraceLess measures, on the real Accel-Sim, how far a
// sampled run of a trace taken with only its plan's traceRanges (trace
// less next time) is from the same sampled run of the trace taken whole:
// for each shape of CASCADE_BENCH_SHAPES (default decode48) of
// CASCADE_BENCH_LAUNCHES launches (default 300) and each config of
// CASCADE_BENCH_CONFIGS (default SM6_TITANX), the whole trace is uploaded
// raw, planned with the default plan, written again with its traceRanges
// only (tracegen.TraceLess, as `cascade gentrace -trace-list` does),
// uploaded, planned again (the same ranges), and both sampled. It prints
// the projections' difference, the representatives whose cycles differ
// and by how much, and the earlier launches each trace's segments warmed
// their L2 from. The ranges hold the launches the warming reads under
// the largest L2 of the checkout's configs (KernelRange.warming), so
// the warming, and the projection, should be the same
// (docs/sampling.md, "Trace less next time").
// It also prints, as comments, how many launches the ranges hold for each
// config's L2 alone; CASCADE_BENCH_PLAN_ONLY=1 prints only those, and
// simulates nothing. CASCADE_BENCH_KEEP names a directory to keep each
// shape's server data directory in (its runs' directories under
// work/runs).
func BenchmarkRealTraceLess(b *testing.B) {
	shapes, configs := benchShapes(b, "SM6_TITANX")
	checkout := testkit.RealAccelSim(b)
	for range b.N {
		fmt.Println("| shape, config | traced launches (for warming) | projected, whole | projected, trace-less | difference | representatives differing (of) | largest | L2 warmed from (whole / trace-less) |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
		for _, sh := range shapes {
			shape, cfg := sh.name, sh.cfg
			cfg.From = testkit.RealTrace(b, "vecadd-sm61")
			whole := b.TempDir()
			if _, err := tracegen.GenerateLLM(context.Background(), whole, cfg); err != nil {
				b.Fatal(err)
			}
			data := b.TempDir()
			if keep := os.Getenv("CASCADE_BENCH_KEEP"); keep != "" { // the server's data directory, to look into
				data = filepath.Join(keep, shape)
			}
			addr, _, _ := realServer(b, data, checkout, "CASCADE_RUN_CONCURRENCY=2")
			put := func(src, id string) {
				if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: filepath.Join(data, "s3", "cascade", "traces"), RunName: id}); err != nil {
					b.Fatal(err)
				}
				waitTrace(b, addr, id, "READY")
			}
			put(whole, "whole")
			wp := traceLessPlan(b, addr, "whole")
			less := b.TempDir()
			var ranges []tracegen.TraceRange
			for _, r := range wp.TraceRanges {
				ranges = append(ranges, tracegen.TraceRange{Context: cascade.Deref(r.Context), Start: r.Start, End: r.End})
			}
			if _, err := tracegen.TraceLess(whole, less, ranges); err != nil {
				b.Fatal(err)
			}
			put(less, "less")
			lp := traceLessPlan(b, addr, "less")
			if fmt.Sprint(lp.TraceRanges) != fmt.Sprint(wp.TraceRanges) || lp.Untraced != nil {
				b.Fatalf("%s: the trace-less trace planned otherwise: ranges %v against %v, untraced %v", shape, lp.TraceRanges, wp.TraceRanges, lp.Untraced)
			}
			traced, warming := 0, 0
			for _, r := range wp.TraceRanges {
				traced += r.Launches
				warming += r.Warming
			}
			for _, config := range configs {
				t, w := tracedFor(b, addr, wp.ID, config)
				fmt.Printf("<!-- %s: traced for %s's L2 alone: %d of %d (%d for warming) -->\n", shape, config, t, sh.cfg.Launches, w)
			}
			if os.Getenv("CASCADE_BENCH_PLAN_ONLY") != "" {
				continue
			}
			for _, config := range configs {
				w := runTraceLess(b, addr, "whole", wp.ID, config)
				l := runTraceLess(b, addr, "less", lp.ID, config)
				cycles := map[string]int64{}
				for _, k := range w.KernelPage.Nodes {
					if k.Simulated != nil && *k.Simulated {
						cycles[fmt.Sprint(cascade.Deref(k.Context), k.KernelID)] = k.SimCycles
					}
				}
				differ, reps, largest := 0, 0, 0.0
				for _, k := range l.KernelPage.Nodes {
					if k.Simulated == nil || !*k.Simulated {
						continue
					}
					reps++
					if c, ok := cycles[fmt.Sprint(cascade.Deref(k.Context), k.KernelID)]; !ok || c != k.SimCycles {
						differ++
						if ok {
							largest = max(largest, math.Abs(float64(k.SimCycles-c))/float64(c))
						}
					}
				}
				pw, pl := *w.Sampling.ProjectedCycles, *l.Sampling.ProjectedCycles
				fmt.Printf("| %s, %s | %d of %d (%d) | %.0f | %.0f | %+.3f %% | %d (%d) | %.2f %% | %s / %s |\n", shape, config, traced, sh.cfg.Launches, warming, pw, pl, 100*(pl-pw)/pw,
					differ, reps, 100*largest, warmedFrom(w), warmedFrom(l))
			}
		}
	}
}

// traceLessView is what BenchmarkRealTraceLess reads of a plan.
type traceLessView struct {
	ID          string
	TraceRanges []struct {
		Context                       *string
		Start, End, Launches, Warming int
	}
	Untraced *struct{ Count int }
}

func traceLessPlan(b *testing.B, addr, trace string) traceLessView {
	b.Helper()
	var p struct{ PlanSampling traceLessView }
	if errs := gqlVars(b, addr, `mutation($id: ID!) { planSampling(traceId: $id) { id traceRanges { context start end launches warming } untraced { count } } }`,
		map[string]any{"id": trace}, &p); len(errs) > 0 {
		b.Fatalf("plan %s: %v", trace, errs)
	}
	return p.PlanSampling
}

// tracedFor counts the launches plan's traceRanges hold for config's L2
// alone, and those of them traced for warming.
func tracedFor(b *testing.B, addr, plan, config string) (traced, warming int) {
	b.Helper()
	var r struct {
		SamplingPlan struct {
			TraceRanges []struct{ Launches, Warming int }
		}
	}
	if errs := gqlVars(b, addr, `query($id: ID!, $c: String) { samplingPlan(id: $id) { traceRanges(simConfig: $c) { launches warming } } }`,
		map[string]any{"id": plan, "c": config}, &r); len(errs) > 0 {
		b.Fatalf("traceRanges of %s for %s: %v", plan, config, errs)
	}
	for _, rg := range r.SamplingPlan.TraceRanges {
		traced += rg.Launches
		warming += rg.Warming
	}
	return traced, warming
}

// traceLessRun is a succeeded sampled run as BenchmarkRealTraceLess reads it.
type traceLessRun struct {
	KernelPage struct {
		Nodes []struct {
			KernelID  int
			Context   *string
			SimCycles int64
			Simulated *bool
		}
	}
	Sampling struct {
		ProjectedCycles *float64
		Segments        []struct{ History []string }
	}
}

func runTraceLess(b *testing.B, addr, trace, plan, config string) traceLessRun {
	b.Helper()
	var l struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(b, addr, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"traceId": trace, "simConfig": config, "rerun": true, "sampling": map[string]any{"plan": plan}}}, &l); len(errs) > 0 {
		b.Fatalf("sampled run of %s: %v", trace, errs)
	}
	var r struct {
		Run *struct {
			State string
			Error *string
			traceLessRun
		}
	}
	testkit.Eventually(b, time.Hour, "sampled run of "+trace, func() bool {
		gqlVars(b, addr, `query($id: ID!) { run(id: $id) { state error kernelPage(first: 1000) { nodes { kernelId context simCycles simulated } }
			sampling { projectedCycles segments { history } } } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
		return r.Run != nil && (r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED" || r.Run.State == "CANCELLED")
	})
	if r.Run.State != "SUCCEEDED" || r.Run.Sampling.ProjectedCycles == nil {
		b.Fatalf("sampled run of %s: %s (%v)", trace, r.Run.State, r.Run.Error)
	}
	return r.Run.traceLessRun
}

// warmedFrom sums the earlier launches a sampled run's segments warmed
// their L2 from, as their histories say ("L2 warmed: ... from N earlier
// launches").
func warmedFrom(r traceLessRun) string {
	n, segs := 0, 0
	for _, s := range r.Sampling.Segments {
		for _, h := range s.History {
			if i := strings.Index(h, " from "); i >= 0 && strings.Contains(h, "L2 warmed") {
				var k int
				if _, err := fmt.Sscanf(h[i+len(" from "):], "%d earlier", &k); err == nil {
					n += k
					segs++
				}
			}
		}
	}
	return fmt.Sprintf("%d launches, %d of %d segments", n, segs, len(r.Sampling.Segments))
}
