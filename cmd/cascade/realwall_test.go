package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// BenchmarkRealWall measures what a user waits for, through Cascade on the
// real Accel-Sim: for each shape of CASCADE_BENCH_SHAPES (tracegen.Shapes,
// default decode48) of CASCADE_BENCH_LAUNCHES launches (default 300),
// uploaded raw and post-processed by the server, and each config of
// CASCADE_BENCH_CONFIGS, one after the other, nothing else running on the
// server: a full run, a sampled run of the default plan
// (planSampling(traceId) alone), and a split run of
// CASCADE_BENCH_SPLIT segments (default 2; 0 for none). The server runs
// as many simulations at once as it would by default on this machine
// (CASCADE_RUN_CONCURRENCY=2 on two cores). Each run's wall time is the
// client's: from the launch mutation's answer to the run seen SUCCEEDED
// (polled every 100 ms). It prints the sampled and split runs' wall time
// over the full run's (goals: under 0.2 and at most 0.6 on two cores) and
// their errors against it. `make bench-wall` runs it; it needs a quiet
// machine (the figures are wall times).
func BenchmarkRealWall(b *testing.B) {
	shapes, configs := benchShapes(b, "SM6_TITANX,SM7_QV100")
	segments := envCount(b, "CASCADE_BENCH_SPLIT", 2, 0)
	for range b.N {
		fmt.Println("| shape, config | full run s | sampled run s (ratio) | split run s (ratio) | sampled error (beyond latency), inside | split error, worst launch |")
		fmt.Println("|---|---|---|---|---|---|")
		for _, sh := range shapes {
			shape := sh.name
			addr, n := realLLMTrace(b, sh.cfg)
			var p struct{ PlanSampling struct{ ID string } }
			if errs := gqlVars(b, addr, `mutation { planSampling(traceId: "llm") { id } }`, nil, &p); len(errs) > 0 {
				b.Fatalf("plan: %v", errs)
			}
			for _, config := range configs {
				full, fullWall := wallRun(b, addr, fmt.Sprintf(`{traceId: "llm", simConfig: %q, rerun: true}`, config))
				sampled, sampledWall := wallRun(b, addr, fmt.Sprintf(`{traceId: "llm", simConfig: %q, sampling: {plan: %q, validate: true}}`, config, p.PlanSampling.ID))
				row := fmt.Sprintf("| %s, %s | %.0f | %.0f (**%.2f**) |", shape, config, fullWall, sampledWall, sampledWall/fullWall)
				var split wallResult
				splitWall := 0.0
				if segments > 0 {
					split, splitWall = wallRun(b, addr, fmt.Sprintf(`{traceId: "llm", simConfig: %q, rerun: true, split: {segments: %d}}`, config, segments))
					row += fmt.Sprintf(" %.0f (**%.2f**) |", splitWall, splitWall/fullWall)
				} else {
					row += " |"
				}
				c := sampled.Sampling.Check
				if c == nil || c.FullRun.ID != full.ID {
					b.Fatalf("%s, %s: sampled run %s checked against %+v, want the full run %s", shape, config, sampled.ID, c, full.ID)
				}
				row += fmt.Sprintf(" %+.2f %% (%+.2f %%), %v |", c.TotalErrorPct, *c.BeyondLatencyErrorPct, c.InsideInterval)
				if segments > 0 {
					if len(split.Kernels) != n || len(full.Kernels) != n {
						b.Fatalf("%s, %s: %d and %d kernels, want %d", shape, config, len(full.Kernels), len(split.Kernels), n)
					}
					worst := 0.0
					for i := range full.Kernels {
						f, s := float64(full.Kernels[i].SimCycles), float64(split.Kernels[i].SimCycles)
						worst = max(worst, math.Abs(s-f)/f)
					}
					ft, st := float64(*full.Figures.SimCycles), float64(*split.Figures.SimCycles)
					row += fmt.Sprintf(" %+.3f %%, %.2f %% |", 100*(st-ft)/ft, 100*worst)
				}
				fmt.Println(row)
				printWallEstimate(b, addr, p.PlanSampling.ID, config)
				printSegments(b, addr, sampled.ID)
			}
		}
	}
}

// wallResult is what BenchmarkRealWall reads of a finished run.
type wallResult struct {
	ID, State string
	Error     *string
	Kernels   []struct{ KernelID, SimCycles int }
	Figures   struct{ SimCycles *int64 }
	Sampling  *struct {
		Check *struct {
			FullRun               struct{ ID string }
			TotalErrorPct         float64
			BeyondLatencyErrorPct *float64
			InsideInterval        bool
		}
	}
}

// wallRun launches a run of input and waits for it to succeed: it returns
// the run and the seconds from the launch's answer to its success.
func wallRun(b *testing.B, addr, input string) (wallResult, float64) {
	b.Helper()
	var l struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(b, addr, `mutation { launchRun(input: `+input+`) { id } }`, nil, &l); len(errs) > 0 {
		b.Fatalf("launch %s: %v", input, errs)
	}
	start := time.Now()
	var state struct{ Run struct{ State string } }
	for {
		gqlVars(b, addr, `query($id: ID!) { run(id: $id) { state } }`, map[string]any{"id": l.LaunchRun.ID}, &state)
		if s := state.Run.State; s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" {
			break
		}
		if time.Since(start) > 2*time.Hour {
			b.Fatalf("run %s of %s: still %s after 2 hours", l.LaunchRun.ID, input, state.Run.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wall := time.Since(start).Seconds()
	var r struct{ Run wallResult }
	testkit.Eventually(b, time.Minute, "run "+l.LaunchRun.ID+" read", func() bool {
		gqlVars(b, addr, `query($id: ID!) { run(id: $id) { id state error kernels { kernelId simCycles } figures { simCycles }
			sampling { check { fullRun { id } totalErrorPct beyondLatencyErrorPct insideInterval } } } }`, map[string]any{"id": l.LaunchRun.ID}, &r)
		return r.Run.State != "SUCCEEDED" || r.Run.Sampling == nil || r.Run.Sampling.Check != nil
	})
	if r.Run.State != "SUCCEEDED" {
		b.Fatalf("run %s of %s: %s (%v)", r.Run.ID, input, r.Run.State, r.Run.Error)
	}
	return r.Run, wall
}

// printWallEstimate prints the plan's wall-time estimate on config as
// the server makes it after the runs just measured: the simulator's
// start-up and rate fitted over the config's recent runs (the sampled
// run's segments among them) and the segments' schedule. Where a sampled
// run's time goes: start-up (with the L2 warming kernel) against
// instructions.
func printWallEstimate(b *testing.B, addr, plan, config string) {
	b.Helper()
	var e struct {
		SamplingPlan struct {
			SimulatedInstructions int64
			WallEstimate          *struct {
				Runs                    int
				InstructionsPerSecond   float64
				StartupSeconds          *float64
				Segments, Concurrency   int
				Seconds, ProcessSeconds float64
				FullSeconds             float64
				MeasuredFullSeconds     *float64
			}
		}
	}
	if errs := gqlVars(b, addr, `query($id: ID!, $c: String!) { samplingPlan(id: $id) { simulatedInstructions
		wallEstimate(config: $c) { runs instructionsPerSecond startupSeconds segments concurrency seconds processSeconds fullSeconds measuredFullSeconds } } }`,
		map[string]any{"id": plan, "c": config}, &e); len(errs) > 0 {
		b.Fatalf("wall estimate: %v", errs)
	}
	w := e.SamplingPlan.WallEstimate
	if w == nil {
		fmt.Printf("  %s: no wall estimate\n", config)
		return
	}
	startup := "start-up not fitted"
	if w.StartupSeconds != nil {
		startup = fmt.Sprintf("start-up %.1f s a process", *w.StartupSeconds)
	}
	fmt.Printf("  %s: %d segments, %d warp instructions simulated; %s, %.0f warp instructions/s (%d runs); estimate %.0f s (%.0f s of processes, %d at once)\n",
		config, w.Segments, e.SamplingPlan.SimulatedInstructions, startup, w.InstructionsPerSecond, w.Runs, w.Seconds, w.ProcessSeconds, w.Concurrency)
}

// printSegments prints each segment of the sampled run id: its launches,
// its simulator's wall time and how its L2 was warmed (its history's
// line): where a segment's time goes besides its instructions.
func printSegments(b *testing.B, addr, id string) {
	b.Helper()
	var r struct {
		Run struct {
			Sampling struct {
				Segments []struct {
					Label    *string
					Progress struct{ KernelsTotal int }
					Figures  struct{ WallSeconds *float64 }
					History  []string
				}
			}
		}
	}
	if errs := gqlVars(b, addr, `query($id: ID!) { run(id: $id) { sampling { segments { label progress { kernelsTotal }
		figures { wallSeconds } history } } } }`, map[string]any{"id": id}, &r); len(errs) > 0 {
		b.Fatalf("segments: %v", errs)
	}
	for _, s := range r.Run.Sampling.Segments {
		warmed := "not warmed"
		for _, h := range s.History {
			if i := strings.Index(h, "L2 "); i >= 0 {
				warmed = h[i:]
			}
		}
		wall := 0.0
		if s.Figures.WallSeconds != nil {
			wall = *s.Figures.WallSeconds
		}
		label := ""
		if s.Label != nil {
			label = *s.Label
		}
		fmt.Printf("    %s: %d launches, %.1f s; %s\n", label, s.Progress.KernelsTotal, wall, warmed)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// benchShape is a trace shape a real-simulator benchmark runs on.
type benchShape struct {
	name string
	cfg  tracegen.LLMConfig
}

// benchShapes reads what a real-simulator benchmark runs over: the shapes
// of CASCADE_BENCH_SHAPES (tracegen.Shapes, comma-separated; default
// decode48) at CASCADE_BENCH_LAUNCHES launches (default 300), and the
// configs of CASCADE_BENCH_CONFIGS (default defConfigs).
func benchShapes(b *testing.B, defConfigs string) ([]benchShape, []string) {
	b.Helper()
	launches := envCount(b, "CASCADE_BENCH_LAUNCHES", 300, 1)
	var shapes []benchShape
	for _, name := range strings.Split(envOr("CASCADE_BENCH_SHAPES", "decode48"), ",") {
		cfg, ok := tracegen.Shapes[name]
		if !ok {
			b.Fatalf("CASCADE_BENCH_SHAPES: no shape %q", name)
		}
		cfg.Launches = launches
		shapes = append(shapes, benchShape{name, cfg})
	}
	return shapes, strings.Split(envOr("CASCADE_BENCH_CONFIGS", defConfigs), ",")
}
