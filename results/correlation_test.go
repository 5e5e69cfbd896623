package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/results"
)

// correlRig is a trace of kernels measured by a profile, and runs of it
// whose kernels carry cycles and dram_reads.
type correlRig struct {
	s      *memStore
	rd     *results.Correlator
	reader *results.Reader // rd's
}

var correlCounters = []cascade.StatCounter{
	{Name: "cycles", Kind: string(simstats.Aggregate), Unit: "cycles"},
	{Name: "dram_reads", Kind: string(simstats.Aggregate), Unit: "requests"},
}

// newCorrelRig is a trace "t1" of n kernels in ctx (nil: a single-context
// trace), ids 1..n, with measured counters by statistic (NaN: none).
func newCorrelRig(ctx *string, measured map[string][]float64) *correlRig {
	s := &memStore{
		traces:       map[string]cascade.Trace{},
		kernels:      map[string][]cascade.RunKernel{},
		traceKernels: map[string][]cascade.Kernel{},
		counters:     map[string][]cascade.KernelCounter{},
	}
	n := 0
	for _, ms := range measured {
		n = max(n, len(ms))
	}
	stats := []string{}
	for stat, ms := range measured {
		stats = append(stats, stat)
		for seq, v := range ms {
			if !math.IsNaN(v) {
				s.counters["t1"] = append(s.counters["t1"], cascade.KernelCounter{TraceID: "t1", Seq: seq, Stat: stat, Mean: v, Min: v * 0.9, Max: v * 1.1, Count: 3})
			}
		}
	}
	for seq := range n {
		s.traceKernels["t1"] = append(s.traceKernels["t1"], cascade.Kernel{TraceID: "t1", Seq: seq, KernelID: seq + 1, Context: ctx, Name: fmt.Sprintf("k%d", seq)})
	}
	s.traces["t1"] = cascade.Trace{ID: "t1", State: cascade.TraceReady, KernelCount: n,
		Profiles: []cascade.ProfileRead{{File: "ncu.csv", Profiler: "ncu", Launches: n, Matched: n, Stats: stats}}}
	reader := results.New(results.Config{Store: s})
	return &correlRig{s: s, rd: results.NewCorrelator(reader), reader: reader}
}

// run adds a succeeded run of config whose kernel i (id i+1) simulated
// sim["cycles"][i] and sim["dram_reads"][i] (NaN: absent).
func (c *correlRig) run(id, config string, sim map[string][]float64) cascade.Run {
	r := cascade.Run{ID: id, TraceID: "t1", SimConfig: config, State: cascade.RunSucceeded, StatCounters: correlCounters, Seq: int64(len(c.s.runs))}
	for i := range sim["cycles"] {
		v := simstats.Values{sim["cycles"][i], sim["dram_reads"][i]}
		k := c.s.traceKernels["t1"][i]
		c.s.kernels[id] = append(c.s.kernels[id], cascade.RunKernel{RunID: id, Seq: i, KernelID: cascade.Ptr(k.KernelID), Context: k.Context,
			Name: k.Name, SimCycles: int64(sim["cycles"][i]), Stats: simstats.Encode(nil, v)})
	}
	c.s.runs = append(c.s.runs, r)
	return r
}

// wantFigures computes a statistic's figures plainly from its pairs.
func wantFigures(sim, meas []float64) cascade.StatCorrelation {
	var w cascade.StatCorrelation
	var ape, abs, sq float64
	apeN := 0
	for i := range sim {
		s, m := sim[i], meas[i]
		w.Kernels++
		w.SimTotal += s
		w.MeasuredTotal += m
		abs += math.Abs(s - m)
		sq += (s - m) * (s - m)
		if s > m {
			w.Over++
		} else if s < m {
			w.Under++
		}
		if m != 0 || s == 0 {
			e := 0.0
			if m != 0 {
				e = math.Abs(100 * (s - m) / m)
			}
			ape += e
			apeN++
			if e < 1 {
				w.Within1Pct++
			}
			if e < 10 {
				w.Within10Pct++
			}
		}
	}
	n := float64(len(sim))
	w.MAE = abs / n
	w.MAPE = cascade.Ptr(ape / float64(apeN))
	w.AggregateErrorPct = cascade.Ptr(100 * abs / w.MeasuredTotal)
	w.TotalErrorPct = cascade.Ptr(100 * (w.SimTotal - w.MeasuredTotal) / w.MeasuredTotal)
	w.NRMSE = cascade.Ptr(math.Sqrt(sq/n) / (w.MeasuredTotal / n))
	var ms, mm float64
	for i := range sim {
		ms += sim[i] / n
		mm += meas[i] / n
	}
	var sxy, sxx, syy float64
	for i := range sim {
		sxy += (sim[i] - ms) * (meas[i] - mm)
		sxx += (sim[i] - ms) * (sim[i] - ms)
		syy += (meas[i] - mm) * (meas[i] - mm)
	}
	w.Pearson = cascade.Ptr(sxy / math.Sqrt(sxx*syy))
	return w
}

func checkFigures(t *testing.T, got cascade.StatCorrelation, want cascade.StatCorrelation) {
	t.Helper()
	if got.Kernels != want.Kernels || got.Over != want.Over || got.Under != want.Under ||
		got.Within1Pct != want.Within1Pct || got.Within10Pct != want.Within10Pct {
		t.Errorf("%s: counts %d kernels %d over %d under %d <1%% %d <10%%, want %d %d %d %d %d", got.Stat,
			got.Kernels, got.Over, got.Under, got.Within1Pct, got.Within10Pct, want.Kernels, want.Over, want.Under, want.Within1Pct, want.Within10Pct)
	}
	for _, f := range []struct {
		name      string
		got, want *float64
	}{{"MAE", &got.MAE, &want.MAE}, {"MAPE", got.MAPE, want.MAPE}, {"Agg_Err", got.AggregateErrorPct, want.AggregateErrorPct},
		{"total error", got.TotalErrorPct, want.TotalErrorPct}, {"NRMSE", got.NRMSE, want.NRMSE}, {"Pearson", got.Pearson, want.Pearson},
		{"sim total", &got.SimTotal, &want.SimTotal}, {"measured total", &got.MeasuredTotal, &want.MeasuredTotal}} {
		if f.want == nil || !near(f.got, *f.want) {
			t.Errorf("%s: %s %v, want %v", got.Stat, f.name, deref(f.got), deref(f.want))
		}
	}
}

// TestCorrelationFigures: a run's cycles and DRAM reads against a
// profile's, kernel by kernel, give the correlator's figures as computed
// plainly from the pairs; a kernel measured 0 but simulated more has no
// error, counts in no percentage and is the furthest off; one absent on
// either side takes no part.
func TestCorrelationFigures(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	c := newCorrelRig(nil, map[string][]float64{
		"cycles":     {100, 100, 200, 500, nan},
		"dram_reads": {32, 0, 0, nan, 8},
	})
	r := c.run("r1", "SM7_QV100", map[string][]float64{
		"cycles":     {111, 90, 200, 1000, 300},
		"dram_reads": {64, 0, 5, 7, nan},
	})
	got, err := c.rd.Correlation(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Stats) != 2 || got.Stats[0].Stat != "cycles" || got.Stats[1].Stat != "dram_reads" {
		t.Fatalf("statistics %+v, want cycles then dram_reads", got.Stats)
	}
	cy, dr := got.Stats[0], got.Stats[1]
	checkFigures(t, cy, wantFigures([]float64{111, 90, 200, 1000}, []float64{100, 100, 200, 500}))
	// By hand: errors +11 %, -10 %, 0, +100 %.
	if !near(cy.MAPE, 30.25) || cy.Within1Pct != 1 || cy.Within10Pct != 1 || cy.Over != 2 || cy.Under != 1 {
		t.Errorf("cycles: MAPE %v, within %d/%d, over %d under %d; want 30.25, 1/1, 2, 1", deref(cy.MAPE), cy.Within1Pct, cy.Within10Pct, cy.Over, cy.Under)
	}
	var order []int
	for _, p := range cy.FurthestOff {
		order = append(order, p.Seq)
	}
	if fmt.Sprint(order) != "[3 0 1 2]" {
		t.Errorf("cycles furthest off %v, want kernels 3 0 1 2", order)
	}
	if p := cy.FurthestOff[0]; p.Name != "k3" || p.Simulated != 1000 || p.Measured != 500 || p.MeasuredMin != 450 || p.Measurements != 3 || !near(p.ErrorPct, 100) {
		t.Errorf("furthest off %+v", p)
	}
	// dram_reads: kernel 2 measured 0, simulated 5: no error, furthest.
	if dr.Kernels != 3 || !near(dr.MAPE, 50) || dr.Within1Pct != 1 || dr.FurthestOff[0].Seq != 2 || dr.FurthestOff[0].ErrorPct != nil {
		t.Errorf("dram_reads %+v", dr)
	}
	if !near(dr.AggregateErrorPct, 100*(32+5)/32.0) || !near(dr.TotalErrorPct, 100*(69-32)/32.0) {
		t.Errorf("dram_reads: Agg_Err %v, total %v", deref(dr.AggregateErrorPct), deref(dr.TotalErrorPct))
	}
}

// TestCounterPairsJoin: in a multi-context trace, a run of a subset of
// its kernels (another context's kernels with the same ids among them)
// is joined to the counters of the very kernels it ran: by id and
// context, never by position; a truncated kernel takes no part. The
// pairs page by cursor through every one, and the counters CSV has a
// row for each pair.
func TestCounterPairsJoin(t *testing.T) {
	t.Parallel()
	ctxA, ctxB := cascade.Ptr("0xa"), cascade.Ptr("0xb")
	c := newCorrelRig(ctxA, map[string][]float64{"cycles": {10, 20, 30, 40, 50, 60}})
	// Kernels 3..5 are context B's ids 1..3.
	for i := 3; i < 6; i++ {
		c.s.traceKernels["t1"][i].Context, c.s.traceKernels["t1"][i].KernelID = ctxB, i-2
	}
	r := cascade.Run{ID: "r1", TraceID: "t1", SimConfig: "SM7_QV100", State: cascade.RunSucceeded, StatCounters: correlCounters}
	add := func(ctx *string, id int, cycles float64, truncated bool) {
		seq := len(c.s.kernels["r1"])
		c.s.kernels["r1"] = append(c.s.kernels["r1"], cascade.RunKernel{RunID: "r1", Seq: seq, KernelID: cascade.Ptr(id), Context: ctx,
			Name: fmt.Sprintf("%s/%d", *ctx, id), Truncated: truncated, Stats: simstats.Encode(nil, simstats.Values{cycles, simstats.Absent})})
	}
	add(ctxA, 2, 21, false) // trace position 1
	add(ctxB, 1, 44, false) // position 3
	add(ctxB, 2, 99, true)  // position 4, truncated
	add(ctxB, 3, 66, false) // position 5
	c.s.runs = append(c.s.runs, r)
	ctx := context.Background()
	var got []string
	after := ""
	for range 10 {
		p, err := c.rd.CounterPairs(ctx, r, "cycles", cascade.Page{First: 1, After: after, Count: true})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 3 {
			t.Errorf("total %d, want 3", p.Total)
		}
		for _, pr := range p.Items {
			got = append(got, fmt.Sprintf("%d:%g/%g", pr.Seq, pr.Simulated, pr.Measured))
			after = cascade.Cursor(int64(pr.RunSeq))
		}
		if !p.HasNext {
			break
		}
	}
	if want := "[1:21/20 3:44/40 5:66/60]"; fmt.Sprint(got) != want {
		t.Errorf("pairs %v, want %s", got, want)
	}
	if _, err := c.rd.CounterPairs(ctx, r, "l2_hits", cascade.Page{}); cascade.ErrorCode(err) != cascade.EINVALID {
		t.Errorf("an unknown statistic: %v, want EINVALID", err)
	}
	var b bytes.Buffer
	if err := c.rd.WriteCounterPairsCSV(ctx, &b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0][4] != "stat" || strings.Join(rows[3][:7], ",") != "5,3,0xb,0xb/3,cycles,66,60" || rows[3][10] != "1.1" {
		t.Errorf("counters CSV %q", rows)
	}
}

// TestConfigCorrelationRanks: of three configs, one whose run failed has
// no figures; of the other two, each is best on the statistic it
// matches better, and neither is best overall until one is better on
// both. The CSV has a row per statistic and config with a figure.
func TestConfigCorrelationRanks(t *testing.T) {
	t.Parallel()
	c := newCorrelRig(nil, map[string][]float64{"cycles": {100, 200, 300}, "dram_reads": {10, 20, 30}})
	c.run("ra", "A", map[string][]float64{"cycles": {101, 198, 300}, "dram_reads": {20, 40, 60}})
	c.run("rb", "B", map[string][]float64{"cycles": {150, 250, 350}, "dram_reads": {11, 21, 31}})
	failed := c.run("rc", "C", map[string][]float64{"cycles": {100, 200, 300}, "dram_reads": {10, 20, 30}})
	c.s.runs[2].State = cascade.RunFailed
	_ = failed
	ctx := context.Background()
	got, err := c.rd.ConfigCorrelation(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.SimConfigs) != "[A B C]" || got.Runs[2] != nil || got.Runs[0].ID != "ra" {
		t.Fatalf("configs %v runs %v", got.SimConfigs, got.Runs)
	}
	best := map[string]string{}
	for _, st := range got.Stats {
		if st.Configs[2] != nil {
			t.Errorf("%s: the failed config has figures", st.Stat)
		}
		best[st.Stat] = cascade.Deref(st.Best) + " by " + st.Figure
	}
	if best["cycles"] != "A by MAPE" || best["dram_reads"] != "B by NRMSE" {
		t.Errorf("best per statistic %v", best)
	}
	// One win each: the mean ranks are equal, and no config is best.
	if got.Best != nil {
		t.Errorf("best overall %v, want none: A and B won one statistic each", *got.Best)
	}
	// B better on cycles too: B is best overall.
	c.s.kernels["rb"][0].Stats = simstats.Encode(nil, simstats.Values{100, 11})
	c.s.kernels["rb"][1].Stats = simstats.Encode(nil, simstats.Values{200, 21})
	c.s.runs[1].UpdatedAt = c.s.runs[1].UpdatedAt.Add(1) // a new version
	c.s.kernels["rb"][2].Stats = simstats.Encode(nil, simstats.Values{300, 31})
	if got, err = c.rd.ConfigCorrelation(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if cascade.Deref(got.Best) != "B" {
		t.Errorf("best overall %v after B matched cycles exactly, want B", cascade.Deref(got.Best))
	}
	var b bytes.Buffer
	if err := c.rd.WriteConfigCorrelationCSV(ctx, &b, "t1"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][0] != "sim_config" || rows[1][0] != "A" || rows[1][2] != "false" || rows[1][3] != "cycles" {
		t.Fatalf("CSV %q", rows)
	}
	for _, row := range rows[1:] {
		if wantBest := row[0] == "B"; row[len(row)-2] != fmt.Sprint(wantBest) {
			t.Errorf("row %q: best_overall %s", row, row[len(row)-2])
		}
	}
}
