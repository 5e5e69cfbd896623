package results_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracedir"
)

// designRig is a sweep of SM7_QV100 over -gpgpu_n_clusters 40, 80 and
// the modifiers "" and 1455MHZ (four cells), one trace.
func designRig(t *testing.T) (*memStore, *results.Reader) {
	t.Helper()
	s := &memStore{
		traces:  map[string]cascade.Trace{"t1": {ID: "t1", State: cascade.TraceReady}},
		kernels: map[string][]cascade.RunKernel{},
		sweep: cascade.Sweep{ID: "s1", TraceIDs: []string{"t1"}, Axes: []cascade.SweepAxis{
			{Option: "-gpgpu_n_clusters", Values: []string{"40", "80"}}, {Values: []string{"", "1455MHZ"}}}},
	}
	for _, n := range []string{"40", "80"} {
		for _, mod := range []string{"", "1455MHZ"} {
			name := "SM7_QV100 -gpgpu_n_clusters " + n
			if mod != "" {
				name = "SM7_QV100-1455MHZ -gpgpu_n_clusters " + n
			}
			s.sweep.SimConfigs = append(s.sweep.SimConfigs, name)
			s.runs = append(s.runs, cascade.Run{ID: fmt.Sprintf("r%d", len(s.runs)), TraceID: "t1", SimConfig: name,
				ConfigBase: simconfigtest.QV100, State: cascade.RunQueued, SweepID: &s.sweep.ID})
		}
	}
	return s, results.New(results.Config{Store: s, Configs: configsDir(simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100))})
}

// succeed ends run i with kernels "a" (cycles a, twice) and "b" (cycles b)
// at the core clock.
func (s *memStore) succeed(i int, a, b int64, clock float64) {
	r := &s.runs[i]
	r.State, r.Figures.CoreClockMHz = cascade.RunSucceeded, clock
	r.UpdatedAt = r.UpdatedAt.Add(1)
	s.kernels[r.ID] = []cascade.RunKernel{{RunID: r.ID, Seq: 0, Name: "a", SimCycles: a}, {RunID: r.ID, Seq: 1, Name: "b", SimCycles: b},
		{RunID: r.ID, Seq: 2, Name: "a", SimCycles: a}}
}

func near(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) <= 1e-9*math.Abs(want) }

func TestDesignSpace(t *testing.T) {
	ctx := context.Background()
	s, m := designRig(t)
	ds, err := m.DesignSpace(ctx, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	// Cells in grid order, the last axis fastest; the shipped one (80 SMs,
	// no modifier) is the default baseline, before any run succeeded.
	var vals []string
	for _, c := range ds.Cells {
		vals = append(vals, strings.Join(c.Values, "/"))
		if c.Runs != 1 || c.Succeeded != 0 || c.TimeNs != nil || c.Speedup != nil {
			t.Errorf("%s before any run: %+v", c.SimConfig, c)
		}
	}
	if got := strings.Join(vals, " "); got != "40/ 40/1455MHZ 80/ 80/1455MHZ" {
		t.Errorf("values %q", got)
	}
	if ds.Baseline != s.sweep.SimConfigs[2] || !ds.Cells[2].Shipped || ds.Cells[0].Shipped {
		t.Errorf("baseline %q, shipped %v", ds.Baseline, ds.Cells[2].Shipped)
	}

	s.succeed(2, 1000, 2000, 1000) // baseline: 4000 cycles, 4000 ns
	s.succeed(0, 2000, 2000, 1000) // 6000 ns: 0.667×; a 0.5×, b 1×
	s.succeed(1, 2000, 2000, 2000) // 3000 ns: 1.333×
	ds, err = m.DesignSpace(ctx, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	c0, c1, c2 := ds.Cells[0], ds.Cells[1], ds.Cells[2]
	if !near(c2.Cycles, 4000) || !near(c2.TimeNs, 4000) || !near(c2.Speedup, 1) {
		t.Errorf("baseline %+v", c2)
	}
	if !near(c0.Cycles, 6000) || !near(c0.TimeNs, 6000) || !near(c0.Speedup, 4000.0/6000) {
		t.Errorf("cell 0 %+v", c0)
	}
	if !near(c1.TimeNs, 3000) || !near(c1.Speedup, 4000.0/3000) {
		t.Errorf("cell 1: time at its own clock %+v", c1)
	}
	if ds.Cells[3].Speedup != nil || ds.Cells[3].Succeeded != 0 {
		t.Errorf("cell 3 has no run succeeded: %+v", ds.Cells[3])
	}
	if len(ds.Kernels) != 2 || ds.Kernels[0].Name != "a" || ds.Kernels[1].Name != "b" {
		t.Fatalf("kernels %+v", ds.Kernels)
	}
	if a := ds.Kernels[0]; !near(a.TimeNs[0], 4000) || !near(a.Speedup[0], 0.5) || !near(a.Speedup[2], 1) || a.TimeNs[3] != nil {
		t.Errorf("kernel a %+v", a)
	}
	if b := ds.Kernels[1]; !near(b.Speedup[0], 1) || !near(b.Speedup[1], 2) {
		t.Errorf("kernel b %+v", b)
	}

	// Another baseline: the speedups are against it; each run was read once.
	pages := s.pages
	ds, err = m.DesignSpace(ctx, "s1", s.sweep.SimConfigs[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.pages != pages {
		t.Errorf("read %d kernel pages again", s.pages-pages)
	}
	if !near(ds.Cells[2].Speedup, 1.5) || !near(ds.Cells[0].Speedup, 1) || !near(ds.Kernels[0].Speedup[2], 2) {
		t.Errorf("against cell 0: %v %v", *ds.Cells[2].Speedup, *ds.Kernels[0].Speedup[2])
	}
	if _, err := m.DesignSpace(ctx, "s1", "SM7_QV100 -gpgpu_n_clusters 7"); cascade.ErrorCode(err) != cascade.EINVALID {
		t.Errorf("unknown baseline: %v", err)
	}

	// A sampled run: its projected cycles and interval, the speedup's bounds.
	r := &s.runs[3]
	s.succeed(3, 1, 1, 1000)
	r.Sampling = &cascade.SampledRun{ProjectedCycles: cascade.Ptr(2000.0), CILowCycles: cascade.Ptr(1800.0), CIHighCycles: cascade.Ptr(2500.0)}
	// And a changed run: the sums start again.
	s.succeed(1, 1000, 1000, 2000)
	ds, err = m.DesignSpace(ctx, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	c1, c3 := ds.Cells[1], ds.Cells[3]
	if !near(c1.TimeNs, 1500) {
		t.Errorf("changed run: %+v", c1)
	}
	if c3.Sampled != 1 || !near(c3.Cycles, 2000) || !near(c3.TimeNs, 2000) || !near(c3.TimeLowNs, 1800) || !near(c3.TimeHighNs, 2500) {
		t.Errorf("sampled cell %+v", c3)
	}
	if !near(c3.Speedup, 2) || !near(c3.SpeedupLow, 4000.0/2500) || !near(c3.SpeedupHigh, 4000.0/1800) {
		t.Errorf("sampled speedup %v [%v, %v]", *c3.Speedup, *c3.SpeedupLow, *c3.SpeedupHigh)
	}
	if ds.Cells[2].TimeLowNs != nil || ds.Cells[2].SpeedupLow != nil {
		t.Errorf("a full cell against a full baseline has no interval: %+v", ds.Cells[2])
	}
}

func TestDesignCSV(t *testing.T) {
	ctx := context.Background()
	s, m := designRig(t)
	s.succeed(2, 1000, 2000, 1000)
	s.succeed(0, 2000, 2000, 1000)
	var b strings.Builder
	if err := m.WriteDesignCSV(ctx, &b, "s1", ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"scope,config,base,gpgpu_n_clusters,modifier,kernel,trace_id,step,runs,succeeded,sampled,cycles,time_ns,time_low_ns,time_high_ns,speedup,speedup_low,speedup_high,significant,full_speedup,speedup_error_pct,energy_j,avg_power_w,insts_per_joule,baseline",
		"cell,SM7_QV100 -gpgpu_n_clusters 40,SM7_QV100,40,,,,,1,1,0,6000,6000,,,0.6666666666666666,,,,,,,,,false",
		"cell,SM7_QV100-1455MHZ -gpgpu_n_clusters 40,SM7_QV100,40,1455MHZ,,,,1,0,0,,,,,,,,,,,,,,false",
		"cell,SM7_QV100 -gpgpu_n_clusters 80,SM7_QV100,80,,,,,1,1,0,4000,4000,,,1,,,,,,,,,true",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[min(i, len(lines)-1)], w)
		}
	}
	if k := "kernel,SM7_QV100 -gpgpu_n_clusters 40,SM7_QV100,40,,a,,,,,,,4000,,,0.5,,,,,,,,,false"; !strings.Contains(b.String(), k+"\n") {
		t.Errorf("no row %q in\n%s", k, b.String())
	}
}

// TestDesignSpaceSteps: for a trace with a step timeline, each cell's
// step times are what its run projects (as the run's own results say),
// and their speedups the baseline's projection over the cell's.
func TestDesignSpaceSteps(t *testing.T) {
	ctx := context.Background()
	s, _ := designRig(t)
	bucket := t.TempDir()
	for _, f := range []string{tracedir.TimelineFile, tracedir.KernelMappingFile} {
		testkit.CopyFile(t, filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", f), filepath.Join(bucket, "t1", f))
	}
	tr := s.traces["t1"]
	tr.HasStepTimeline = true
	s.traces["t1"] = tr
	m := results.New(results.Config{Store: s, BucketDir: bucket, Configs: configsDir(simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100))})
	for i, scale := range map[int]int64{0: 4, 2: 1} {
		r := &s.runs[i]
		r.State, r.Figures.CoreClockMHz = cascade.RunSucceeded, 1000
		var ks []cascade.RunKernel
		for id := 1; id <= 4; id++ {
			ks = append(ks, cascade.RunKernel{RunID: r.ID, Seq: id - 1, KernelID: cascade.Ptr(id), Context: cascade.Ptr("0x55d2c3a1e4f0"),
				Name: fmt.Sprintf("k%d", id), SimCycles: scale * int64(1000*id)})
		}
		s.kernels[r.ID] = ks
	}
	ds, err := m.DesignSpace(ctx, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Steps) == 0 {
		t.Fatal("no steps")
	}
	own := func(i int) []cascade.StepProjection {
		res, err := m.Read(ctx, s.runs[i])
		if err != nil {
			t.Fatal(err)
		}
		return res.Steps
	}
	s0, s2 := own(0), own(2)
	if len(s0) != len(ds.Steps) {
		t.Fatalf("%d steps, the run projects %d", len(ds.Steps), len(s0))
	}
	for j, st := range ds.Steps {
		if st.TraceID != "t1" || st.Step != s0[j].Step || st.MeasuredNs != s0[j].MeasuredNs {
			t.Errorf("step %d: %+v, want %+v", j, st, s0[j])
		}
		if !near(st.TimeNs[0], s0[j].ProjectedNs) || !near(st.TimeNs[2], s2[j].ProjectedNs) || st.TimeNs[1] != nil {
			t.Errorf("step %d times %v, want %v and %v", j, st.TimeNs, s0[j].ProjectedNs, s2[j].ProjectedNs)
		}
		if !near(st.Speedup[0], s2[j].ProjectedNs/s0[j].ProjectedNs) || !near(st.Speedup[2], 1) {
			t.Errorf("step %d speedups %v", j, st.Speedup)
		}
	}
}

// TestDesignSpacePower: cells whose runs have AccelWattch's energy get
// it added up, their average power (energy over time) and their
// performance per watt; a cell with a run without power gets none.
func TestDesignSpacePower(t *testing.T) {
	ctx := context.Background()
	s, m := designRig(t)
	withEnergy := func(i int, joules ...float64) {
		r := &s.runs[i]
		r.StatCounters = []cascade.StatCounter{{Name: "cycles", Kind: "aggregate", Unit: "cycles"}, {Name: "energy", Kind: "aggregate", Unit: "J"}}
		for k := range s.kernels[r.ID] {
			s.kernels[r.ID][k].SimInstructions = 1000
			s.kernels[r.ID][k].Stats = simstats.Encode(nil, []float64{float64(s.kernels[r.ID][k].SimCycles), joules[k]})
		}
	}
	s.succeed(2, 1000, 2000, 1000) // 4000 ns
	withEnergy(2, 1e-4, 2e-4, 1e-4)
	s.succeed(0, 2000, 2000, 1000) // no power
	ds, err := m.DesignSpace(ctx, "s1", "")
	if err != nil {
		t.Fatal(err)
	}
	c2 := ds.Cells[2]
	if !near(c2.EnergyJ, 4e-4) || !near(c2.AvgPowerW, 4e-4/4000e-9) || !near(c2.InstsPerJoule, 3000/4e-4) {
		t.Errorf("cell with power: energy %v, power %v, insts/J %v", deref(c2.EnergyJ), deref(c2.AvgPowerW), deref(c2.InstsPerJoule))
	}
	if c0 := ds.Cells[0]; c0.EnergyJ != nil || c0.AvgPowerW != nil || c0.InstsPerJoule != nil {
		t.Errorf("cell without power: %+v", c0)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
