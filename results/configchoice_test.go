package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestConfigsPreferAFullRun: each config of a trace is stood for by its
// latest succeeded run that is not sampled, a sampled run only when the
// config has no other succeeded run, and the configs compared, their
// correlation and both CSVs say so alike: the same run of each config,
// marked sampled when it is. A sampled run's segments are not runs of
// their config.
func TestConfigsPreferAFullRun(t *testing.T) {
	t.Parallel()
	c := newCorrelRig(nil, map[string][]float64{"cycles": {100, 200, 300}, "dram_reads": {10, 20, 30}})
	sim := map[string][]float64{"cycles": {110, 190, 310}, "dram_reads": {10, 21, 29}}
	sampling := &cascade.SampledRun{ProjectedCycles: cascade.Ptr(610.0)}
	add := func(id, config string, state cascade.RunState, sampled bool, by string) {
		c.run(id, config, sim)
		r := &c.s.runs[len(c.s.runs)-1]
		r.State = state
		if sampled {
			r.Sampling = sampling
		}
		if by != "" {
			r.SampledByID = &by
		}
	}
	// A: an older full run and a newer sampled one: the full one.
	add("a-full", "A", cascade.RunSucceeded, false, "")
	add("a-sampled", "A", cascade.RunSucceeded, true, "")
	// B: a sampled run only (its segment is not one of B's runs).
	add("b-sampled", "B", cascade.RunSucceeded, true, "")
	add("b-segment", "B", cascade.RunSucceeded, false, "b-sampled")
	// C: a full run that failed and a sampled one that succeeded.
	add("c-full", "C", cascade.RunFailed, false, "")
	add("c-sampled", "C", cascade.RunSucceeded, true, "")
	// D: two full runs and a newer sampled one: the newer full one.
	add("d-full1", "D", cascade.RunSucceeded, false, "")
	add("d-full2", "D", cascade.RunSucceeded, false, "")
	add("d-sampled", "D", cascade.RunSucceeded, true, "")
	want := map[string]struct {
		run     string
		sampled bool
		runs    int
	}{"A": {"a-full", false, 2}, "B": {"b-sampled", true, 1}, "C": {"c-sampled", true, 2}, "D": {"d-full2", false, 3}}

	ctx := context.Background()
	cs, err := c.reader.ConfigComparison(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != len(want) {
		t.Fatalf("%d configs, want %d", len(cs), len(want))
	}
	for _, cc := range cs {
		w := want[cc.SimConfig]
		if cc.Run == nil || cc.Run.ID != w.run || (cc.Run.Sampling != nil) != w.sampled || cc.Runs != w.runs {
			t.Errorf("%s: run %v of %d runs, want %s (sampled %v) of %d", cc.SimConfig, cc.Run, cc.Runs, w.run, w.sampled, w.runs)
		}
	}
	cor, err := c.rd.ConfigCorrelation(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	for i, cfg := range cor.SimConfigs {
		if r := cor.Runs[i]; r == nil || r.ID != want[cfg].run || (r.Sampling != nil) != want[cfg].sampled {
			t.Errorf("correlation of %s: run %v, want %s", cfg, r, want[cfg].run)
		}
	}

	// rows reads a CSV and checks that each row's run and sampled
	// columns are the config's.
	rows := func(what string, write func(*bytes.Buffer) error, config, run string) int {
		t.Helper()
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		rs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ci, ri, si := slices.Index(rs[0], config), slices.Index(rs[0], run), slices.Index(rs[0], "sampled")
		if ci < 0 || ri < 0 || si < 0 {
			t.Fatalf("%s header %v: no %s, %s or sampled", what, rs[0], config, run)
		}
		for _, row := range rs[1:] {
			w := want[row[ci]]
			if row[ri] != w.run || row[si] != map[bool]string{true: "true", false: "false"}[w.sampled] {
				t.Errorf("%s row %v: want run %s, sampled %v", what, row, w.run, w.sampled)
			}
		}
		return len(rs) - 1
	}
	if n := rows("configs.csv", func(b *bytes.Buffer) error { return c.reader.WriteConfigsCSV(ctx, b, "t1") }, "config", "run_id"); n != 4+4*3 {
		t.Errorf("configs.csv: %d rows, want a run row and 3 kernel rows for each of 4 configs", n)
	}
	if n := rows("correlation.csv", func(b *bytes.Buffer) error { return c.rd.WriteConfigCorrelationCSV(ctx, b, "t1") }, "sim_config", "run"); n != 4*2 {
		t.Errorf("correlation.csv: %d rows, want 2 statistics of 4 configs", n)
	}
}
