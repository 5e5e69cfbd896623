package results_test

import (
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestConfigComparisonCountsEveryRun: of a trace's runs under two configs,
// one config's succeeded and the other's failed, the comparison gives the
// succeeded config the figures of its run's own Results and the failed
// one none, "0 of 1 succeeded"; the kernels page aligns each kernel's
// error with the configs and pages by cursor.
func TestConfigComparisonCountsEveryRun(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		c := newComparisonRig(t, d, []string{"ta"})
		ok, bad := c.runs[0], c.runs[1]
		c.end(ok, cascade.RunSucceeded)
		c.end(bad, cascade.RunFailed)
		got, err := c.m.ConfigComparison(ctx, "ta")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("got %d configs, want 2", len(got))
		}
		at := map[string]int{got[0].SimConfig: 0, got[1].SimConfig: 1}
		g, b := got[at[ok.SimConfig]], got[at[bad.SimConfig]]
		if g.Run == nil || g.Run.ID != ok.ID || g.Runs != 1 || g.Succeeded != 1 || g.Comparison == nil {
			t.Fatalf("succeeded config: %+v", g)
		}
		run, err := d.Run(ctx, ok.ID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.m.Read(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRunComparison(*g.Comparison, *res.Comparison) {
			t.Errorf("comparison %+v, want the run's own %+v", *g.Comparison, *res.Comparison)
		}
		if b.Run != nil || b.Comparison != nil || b.Runs != 1 || b.Succeeded != 0 || b.Failed != 1 {
			t.Fatalf("failed config: %+v, want 0 of 1 succeeded and no figures", b)
		}

		var seen []runsKernel
		after := ""
		for pages := 0; pages < 10; pages++ {
			_, p, err := c.m.ConfigComparisonKernels(ctx, "ta", cascade.Page{First: 3, After: after, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != 4 {
				t.Fatalf("total %d, want 4", p.Total)
			}
			for _, k := range p.Items {
				if len(k.Errors) != 2 || k.Errors[at[bad.SimConfig]] != nil || k.Errors[at[ok.SimConfig]] == nil {
					t.Fatalf("kernel %d: errors %v, want one for %s only", k.KernelID, k.Errors, ok.SimConfig)
				}
				seen = append(seen, runsKernel{k.KernelID, *k.Errors[at[ok.SimConfig]]})
				after = cascade.Cursor(int64(k.Seq))
			}
			if !p.HasNext {
				break
			}
		}
		if len(seen) != 4 {
			t.Fatalf("paged %d kernels, want 4", len(seen))
		}
		for i, k := range seen {
			if k.id != i+1 || k.errPct != *res.Kernels[i].ErrorPct {
				t.Errorf("kernel %d: %+v, want id %d error %v", i, k, i+1, *res.Kernels[i].ErrorPct)
			}
		}
	})
}

type runsKernel struct {
	id     int
	errPct float64
}

// TestSweepGridSaysHowManyRuns: a sweep's grid has one cell per trace and
// config; a failed run's cell is 0 of 1 with no figures, a succeeded
// one's 1 of 1 with its run's own comparison, a trace without timing 1 of
// 1 without one. Asked again, it reads no run's kernel results; after a
// run changes, that run's only.
func TestSweepGridSaysHowManyRuns(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		c := newComparisonRig(t, d, []string{"ta", "none"})
		c.end(c.runs[0], cascade.RunSucceeded)
		c.end(c.runs[1], cascade.RunFailed)
		c.end(c.runs[2], cascade.RunSucceeded)
		cells, err := c.m.SweepGrid(ctx, c.sweep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != 4 {
			t.Fatalf("%d cells, want 4", len(cells))
		}
		want := []struct {
			succeeded int
			compared  bool
			state     cascade.RunState
		}{{1, true, cascade.RunSucceeded}, {0, false, cascade.RunFailed}, {1, false, cascade.RunSucceeded}, {0, false, cascade.RunQueued}}
		for i, w := range want {
			cl := cells[i]
			if cl.TraceID != c.runs[i].TraceID || cl.SimConfig != c.runs[i].SimConfig || cl.Run == nil || cl.Run.ID != c.runs[i].ID {
				t.Fatalf("cell %d: %+v, want run %s", i, cl, c.runs[i].ID)
			}
			if cl.Runs != 1 || cl.Succeeded != w.succeeded || (cl.Comparison != nil) != w.compared || cl.Run.State != w.state {
				t.Errorf("cell %d: %d of %d succeeded, state %s, compared %v; want %d of 1, %s, %v", i, cl.Succeeded, cl.Runs, cl.Run.State, cl.Comparison != nil, w.succeeded, w.state, w.compared)
			}
		}
		res, err := c.m.Read(ctx, *cells[0].Run)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRunComparison(*cells[0].Comparison, *res.Comparison) {
			t.Errorf("cell 0: %+v, want the run's own %+v", *cells[0].Comparison, *res.Comparison)
		}
		reads := func(what string, want int64) {
			t.Helper()
			before := c.store.runKernels.Load()
			if _, err := c.m.SweepGrid(ctx, c.sweep.ID); err != nil {
				t.Fatal(err)
			}
			if n := c.store.runKernels.Load() - before; n != want {
				t.Errorf("%s: read the kernel results of %d runs, want %d", what, n, want)
			}
		}
		reads("again", 0)
		c.end(c.runs[3], cascade.RunSucceeded) // of the trace without timing: nothing to read
		reads("a run without timing succeeded", 0)
		if _, _, err := d.UpdateRun(ctx, c.runs[0].ID, func(r *cascade.Run) error { r.Label = cascade.Ptr("relabelled"); return nil }); err != nil {
			t.Fatal(err)
		}
		reads("a run relabelled", 1)
	})
}

// sameRunComparison reports whether a and b have the same figures.
func sameRunComparison(a, b cascade.RunComparison) bool {
	ra, rb := a.Correlation, b.Correlation
	a.Correlation, b.Correlation = nil, nil
	return a == b && (ra == nil) == (rb == nil) && (ra == nil || *ra == *rb)
}

// TestConfigsComparedWithoutTiming: a trace without measured timing, run
// under two configs, still compares what the simulator gave: each
// kernel's cycles under each config, and a CSV with each run's totals
// (cycles, time at the config's clock) and each kernel's row per config,
// the measured columns empty.
func TestConfigsComparedWithoutTiming(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		c := newComparisonRig(t, d, []string{"none"})
		c.end(c.runs[0], cascade.RunSucceeded)
		c.end(c.runs[1], cascade.RunSucceeded)
		cs, p, err := c.m.ConfigComparisonKernels(ctx, "none", cascade.Page{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2 || cs[0].Comparison != nil || cs[1].Comparison != nil || len(p.Items) != 4 {
			t.Fatalf("configs %+v, %d kernels: want 2 configs without comparison, 4 kernels", cs, len(p.Items))
		}
		stored := map[string][]cascade.RunKernel{}
		for _, cc := range cs {
			ks, err := d.RunKernels(ctx, cc.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			stored[cc.SimConfig] = ks
		}
		for i, k := range p.Items {
			for j, cc := range cs {
				if k.Cycles[j] == nil || *k.Cycles[j] != stored[cc.SimConfig][i].SimCycles || k.Errors[j] != nil {
					t.Errorf("kernel %d under %s: cycles %v error %v, want %d and none", k.KernelID, cc.SimConfig, k.Cycles[j], k.Errors[j], stored[cc.SimConfig][i].SimCycles)
				}
			}
		}

		var b strings.Builder
		if err := c.m.WriteConfigsCSV(ctx, &b, "none"); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		if len(rows) != 1+2+8 {
			t.Fatalf("%d rows, want a header, 2 run rows and 8 kernel rows:\n%s", len(rows), b.String())
		}
		cfgs, err := simconfig.Load(string(c.configs))
		if err != nil {
			t.Fatal(err)
		}
		for i, cc := range cs {
			row := rows[1+i]
			var sum int64
			for _, k := range stored[cc.SimConfig] {
				sum += k.SimCycles
			}
			cfg, _ := simconfig.Find(cfgs, cc.SimConfig)
			wantNs := float64(sum) * 1000 / cfg.CoreClockMHz
			gotNs, _ := strconv.ParseFloat(row[col["sim_time_ns"]], 64)
			if row[col["scope"]] != "run" || row[col["config"]] != cc.SimConfig || row[col["run_id"]] != cc.Run.ID ||
				row[col["sim_cycles"]] != strconv.FormatInt(sum, 10) || math.Abs(gotNs-wantNs) > 1e-6*wantNs || row[col["measured_ns"]] != "" {
				t.Errorf("run row %v: want %s, %d cycles, %v ns, no measured time", row, cc.SimConfig, sum, wantNs)
			}
		}
		for n, row := range rows[3:] {
			k, cc := stored[cs[n%2].SimConfig][n/2], cs[n%2]
			if row[col["scope"]] != "kernel" || row[col["kernel_id"]] != strconv.Itoa(*k.KernelID) || row[col["config"]] != cc.SimConfig ||
				row[col["sim_cycles"]] != strconv.FormatInt(k.SimCycles, 10) || row[col["error_pct"]] != "" {
				t.Errorf("kernel row %v: want kernel %d under %s, %d cycles", row, *k.KernelID, cc.SimConfig, k.SimCycles)
			}
		}
	})
}
