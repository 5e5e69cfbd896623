package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/upload"
)

// TestRealAccelSimVariants: config variants on the real simulator, the
// vecAdd trace on SM7_QV100 (issue 30's table). By the launcher's names
// from the checkout's define-standard-cfgs.yml (QV100-64SM: 8,729 cycles;
// QV100-1455MHZ: 9,347 cycles, its time at 1455 MHz) and by overrides
// (a design sweep over -gpgpu_n_clusters 40 and 20: 10,848 and 12,392
// cycles, and the sweep's speedup of one over the other; 80 as shipped,
// 8,823, is TestRealAccelSim's). A modifier this build does not know (L1OFF's
// -gmem_skip_L1D) and an option no simulator has are refused before
// anything is queued, with the simulator's own line and the modifier the
// option came from; a sweep with one refused cell queues nothing.
func TestRealAccelSimVariants(t *testing.T) {
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	checkout := testkit.RealAccelSim(t)
	trace := testkit.RealTrace(t, "vecadd-sm61")
	data := t.TempDir()
	addr, out, _ := realServer(t, data, checkout, "CASCADE_RUN_CONCURRENCY=2")
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })
	if !strings.Contains(out.String(), "config modifiers "+filepath.Join(checkout, "util/job_launching/configs/define-standard-cfgs.yml")) {
		t.Errorf("the start-up report does not name the checkout's modifiers file:\n%s", out)
	}
	prefix := filepath.Join(data, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: trace, PrefixDir: prefix, RunName: "vecadd"}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, addr, "vecadd", "READY")

	var mods struct {
		ConfigModifiers struct {
			Bases []struct {
				Name      string
				SimConfig *string
			}
			Modifiers []struct {
				Name   string
				Params []struct{ Option, Value string }
			}
		}
	}
	if errs := gqlVars(t, addr, `{ configModifiers { bases { name simConfig } modifiers { name params { option value } } } }`, nil, &mods); len(errs) > 0 {
		t.Fatal(errs)
	}
	found := 0
	for _, b := range mods.ConfigModifiers.Bases {
		if b.Name == "QV100" && b.SimConfig != nil && *b.SimConfig == "SM7_QV100" {
			found++
		}
	}
	for _, m := range mods.ConfigModifiers.Modifiers {
		if m.Name == "64SM" && len(m.Params) == 1 && m.Params[0].Option == "-gpgpu_n_clusters" && m.Params[0].Value == "64" {
			found++
		}
	}
	if found != 2 {
		t.Errorf("configModifiers lacks QV100 → SM7_QV100 or 64SM → -gpgpu_n_clusters 64: %+v", mods)
	}

	// Refused before launch, by the simulator.
	for name, want := range map[string][]string{
		"QV100-L1OFF":                       {"Unknown Option: '-gmem_skip_L1D'", "from modifier L1OFF", "SM7_QV100 has -gpgpu_gmem_skip_L1D"},
		"SM7_QV100 -gpgpu_no_such_option 3": {"Unknown Option: '-gpgpu_no_such_option'"},
		"SM7_QV100 -gpgpu_n_clusters abc":   {"-gpgpu_n_clusters \"abc\": not a whole number (SM7_QV100 has 80)"},
		"QV100-64MS":                        {`did you mean "64SM"?`},
	} {
		errs := gqlVars(t, addr, `mutation($c: String!) { launchRun(input: {traceId: "vecadd", simConfig: $c}) { id } }`, map[string]any{"c": name}, nil)
		if len(errs) != 1 || !containsAll(errs[0], want) {
			t.Errorf("launch on %q: %v, want an error with %q", name, errs, want)
		}
	}
	errs := gqlVars(t, addr, `mutation { launchSweep(input: {traceIds: ["vecadd"], simConfigs: ["QV100"], axes: [{values: ["", "64SM", "L1OFF"]}]}) { id } }`, nil, nil)
	if len(errs) != 1 || !containsAll(errs[0], []string{"nothing queued", "simConfigs[0] × axes[0].values[2]", "Unknown Option: '-gmem_skip_L1D'"}) {
		t.Errorf("sweep with L1OFF: %v", errs)
	}
	var none struct{ Runs struct{ TotalCount int } }
	gqlVars(t, addr, `{ runs { totalCount } }`, nil, &none)
	if none.Runs.TotalCount != 0 {
		t.Fatalf("%d runs queued by refused launches", none.Runs.TotalCount)
	}

	// By name, and a design sweep by override.
	ids := map[string]string{}
	for _, name := range []string{"QV100-64SM", "QV100-1455MHZ"} {
		var l struct {
			LaunchRun struct {
				ID        string
				SimConfig struct{ Name string }
			}
		}
		if errs := gqlVars(t, addr, `mutation($c: String!) { launchRun(input: {traceId: "vecadd", simConfig: $c}) { id simConfig { name } } }`, map[string]any{"c": name}, &l); len(errs) > 0 {
			t.Fatalf("launch on %s: %v", name, errs)
		}
		if want := "SM7_" + name; l.LaunchRun.SimConfig.Name != want {
			t.Errorf("launch on %s: config %q, want %q", name, l.LaunchRun.SimConfig.Name, want)
		}
		ids["SM7_"+name] = l.LaunchRun.ID
	}
	var sw struct {
		LaunchSweep struct {
			ID         string
			SimConfigs []string
		}
	}
	if errs := gqlVars(t, addr, `mutation { launchSweep(input: {traceIds: ["vecadd"], simConfigs: ["SM7_QV100"], axes: [{option: "-gpgpu_n_clusters", values: ["40", "20"]}]}) { id simConfigs } }`, nil, &sw); len(errs) > 0 {
		t.Fatalf("sweep: %v", errs)
	}
	wantCells := []string{"SM7_QV100 -gpgpu_n_clusters 40", "SM7_QV100 -gpgpu_n_clusters 20"}
	if strings.Join(sw.LaunchSweep.SimConfigs, "|") != strings.Join(wantCells, "|") {
		t.Errorf("sweep cells %q, want %q", sw.LaunchSweep.SimConfigs, wantCells)
	}
	var sweepRuns struct {
		Sweep struct {
			Runs struct {
				Nodes []struct {
					ID        string
					SimConfig struct{ Name string }
				}
			}
		}
	}
	gqlVars(t, addr, `query($id: ID!) { sweep(id: $id) { runs { nodes { id simConfig { name } } } } }`, map[string]any{"id": sw.LaunchSweep.ID}, &sweepRuns)
	for _, r := range sweepRuns.Sweep.Runs.Nodes {
		ids[r.SimConfig.Name] = r.ID
	}

	want := map[string]struct {
		cycles int64
		clock  float64
	}{
		"SM7_QV100-64SM":                 {8729, 1132},
		"SM7_QV100-1455MHZ":              {9347, 1455},
		"SM7_QV100 -gpgpu_n_clusters 40": {10848, 1132},
		"SM7_QV100 -gpgpu_n_clusters 20": {12392, 1132},
	}
	type result struct {
		State     string
		Error     *string
		SimConfig struct {
			Name   string
			Base   *string
			Params []struct {
				Option, Value string
				From          *string
			}
		}
		Figures struct{ CoreClockMHz *float64 }
		Kernels []struct {
			SimCycles int64
			SimTimeNs *float64
		}
	}
	for name, w := range want {
		id, ok := ids[name]
		if !ok {
			t.Errorf("no run on %s", name)
			continue
		}
		var r struct{ Run result }
		testkit.Eventually(t, 5*time.Minute, "run on "+name+" over", func() bool {
			gqlVars(t, addr, `query($id: ID!) { run(id: $id) { state error simConfig { name base params { option value from } } figures { coreClockMHz } kernels { simCycles simTimeNs } } }`,
				map[string]any{"id": id}, &r)
			return r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED"
		})
		got := r.Run
		if got.State != "SUCCEEDED" || len(got.Kernels) != 1 {
			t.Errorf("run on %s: %+v", name, got)
			continue
		}
		if got.Kernels[0].SimCycles != w.cycles {
			t.Errorf("run on %s: %d cycles, want %d", name, got.Kernels[0].SimCycles, w.cycles)
		}
		wantNs := float64(w.cycles) * 1000 / w.clock
		if c := got.Figures.CoreClockMHz; c == nil || *c != w.clock || got.Kernels[0].SimTimeNs == nil || *got.Kernels[0].SimTimeNs != wantNs {
			t.Errorf("run on %s: clock %v, time %v; want %v MHz, %.1f ns", name, c, got.Kernels[0].SimTimeNs, w.clock, wantNs)
		}
		if got.SimConfig.Name != name || got.SimConfig.Base == nil || *got.SimConfig.Base != "SM7_QV100" || len(got.SimConfig.Params) != 1 {
			t.Errorf("run on %s: config %+v", name, got.SimConfig)
		}
	}

	// The sweep's design space: 40 clusters as its baseline, 20 slower.
	var d struct {
		Sweep struct {
			DesignSpace struct {
				Baseline string
				Cells    []struct {
					SimConfig string
					Cycles    *float64
					Speedup   *float64
				}
			}
		}
	}
	if errs := gqlVars(t, addr, `query($id: ID!) { sweep(id: $id) { designSpace(baseline: "SM7_QV100 -gpgpu_n_clusters 40") { baseline cells { simConfig cycles speedup } } } }`,
		map[string]any{"id": sw.LaunchSweep.ID}, &d); len(errs) > 0 {
		t.Fatal(errs)
	}
	cells := d.Sweep.DesignSpace.Cells
	if len(cells) != 2 || cells[1].Cycles == nil || *cells[1].Cycles != 12392 || cells[1].Speedup == nil || *cells[1].Speedup != 10848.0/12392 {
		t.Errorf("design space: %+v, want 20 clusters at 10,848 / 12,392 = %.4f× of 40", d.Sweep.DesignSpace, 10848.0/12392)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
