package sampled

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling"
)

// kernelStore holds runs' kernel results in memory: all a projection
// reads and writes of a Store.
type kernelStore struct {
	Store   // nil: any other method panics
	kernels map[string][]cascade.RunKernel
	appends []int // each AppendRunKernels' from
	// count, when set, counts the kernels appended instead of keeping
	// them (a benchmark's).
	count map[string]int
}

func (s *kernelStore) RunKernels(_ context.Context, id string) ([]cascade.RunKernel, error) {
	return slices.Clone(s.kernels[id]), nil
}

func (s *kernelStore) AppendRunKernels(_ context.Context, id string, from int, ks []cascade.RunKernel) error {
	for i := range ks {
		ks[i].RunID, ks[i].Seq = id, from+i
	}
	if s.count != nil {
		s.count[id] = from + len(ks)
		return nil
	}
	s.kernels[id] = append(s.kernels[id][:from], ks...) // copies ks, whose array the caller reuses
	s.appends = append(s.appends, from)
	return nil
}

// TestProjectionStored: the segments' kernels map back to their launches
// (warm-up left out), and the sampled run gets a kernel for every launch
// in chunks: the representatives' as simulated, the others' cycles,
// instructions and statistics projected from their stratum's
// representative by warp instructions.
func TestProjectionStored(t *testing.T) {
	defer func(n int) { projectChunk = n }(projectChunk)
	projectChunk = 4
	names := []string{"A", "B", "A", "B", "A", "B"}
	instr := []int64{100, 40, 200, 50, 300, 60}
	var in sampling.Input
	for i := range names {
		in.Launches = append(in.Launches, sampling.Launch{KernelID: i + 1, Context: "0xAB", Name: names[i], WarpInstructions: instr[i]})
	}
	plan := sampling.Plan{Launches: 6, Basis: cascade.BasisInstructions, Strata: []cascade.SamplingStratum{
		{Name: "A", Size: 3, Members: []int32{0, 2, 4}, Representatives: []cascade.SamplingRepresentative{{Launch: 2, KernelID: 3}}},
		{Name: "B", Size: 3, Members: []int32{1, 3, 5}, Representatives: []cascade.SamplingRepresentative{{Launch: 3, KernelID: 4}}},
	}}
	counters := []cascade.StatCounter{{Name: "l2_hits", Kind: string(simstats.Aggregate)}, {Name: "dram_reads", Kind: string(simstats.Aggregate)}}
	table, err := runs.StatTable(cascade.Run{StatCounters: counters})
	if err != nil {
		t.Fatal(err)
	}
	ctx := "0xab" // the log's spelling
	id := func(n int) *int { return &n }
	k := func(kid int, cycles, insts int64, stats ...float64) cascade.RunKernel {
		return cascade.RunKernel{KernelID: id(kid), Context: &ctx, Name: names[kid-1], TraceFile: "t", LaunchUID: kid,
			SimCycles: cycles, SimInstructions: insts, IPC: float64(insts) / float64(cycles), Stats: simstats.Encode(nil, stats)}
	}
	st := &kernelStore{kernels: map[string][]cascade.RunKernel{
		"s1": {k(2, 999, 9, 1, 1), k(3, 2000, 4000, 10, 20)}, // warm-up, then A's representative
		"s2": {k(4, 800, 1000, 4, math.NaN())},
	}}
	m := &Coordinator{cfg: Config{Store: st}}
	segs := []cascade.Run{{ID: "s1", StatCounters: counters}, {ID: "s2", StatCounters: counters}}
	sim, simK, err := m.segmentResults(context.Background(), plan, in, segs, nil, counters, table)
	if err != nil {
		t.Fatal(err)
	}
	if len(sim) != 2 || sim[2].Cycles != 2000 || sim[3].Cycles != 800 || len(simK) != 2 || sim[2].Stats[1] != 20 {
		t.Fatalf("simulated %v", sim)
	}
	pr, err := sampling.Project(plan, in, sim)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.storeProjection(context.Background(), "p", plan, in, pr, simK); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.appends, []int{0, 4}) {
		t.Errorf("appended from %v, want chunks from 0 and 4", st.appends)
	}
	got := st.kernels["p"]
	if len(got) != 6 {
		t.Fatalf("%d kernels", len(got))
	}
	rep := map[string]cascade.RunKernel{"A": st.kernels["s1"][1], "B": st.kernels["s2"][0]}
	repLaunch := map[string]int{"A": 2, "B": 3}
	for i, g := range got {
		r := rep[names[i]]
		if g.Seq != i || cascade.Deref(g.KernelID) != i+1 || cascade.Deref(g.Context) != "0xAB" || g.Name != names[i] || g.Simulated == nil {
			t.Errorf("kernel %d: %+v", i, g)
			continue
		}
		if i == repLaunch[names[i]] {
			if !*g.Simulated || g.ProjectedFrom != nil || g.SimCycles != r.SimCycles || g.SimInstructions != r.SimInstructions ||
				g.LaunchUID != r.LaunchUID || string(g.Stats) != string(r.Stats) {
				t.Errorf("representative %d: %+v, simulated %+v", i, g, r)
			}
			continue
		}
		scale := float64(instr[i]) / float64(instr[repLaunch[names[i]]])
		cycles := float64(r.SimCycles) * scale
		wantStats, _ := simstats.Decode(r.Stats)
		stats, err := simstats.Decode(g.Stats)
		if err != nil {
			t.Fatal(err)
		}
		if *g.Simulated || cascade.Deref(g.ProjectedFrom) != repLaunch[names[i]] || g.SimCycles != int64(math.Round(cycles)) ||
			g.SimInstructions != int64(math.Round(float64(r.SimInstructions)*scale)) ||
			math.Abs(g.IPC-float64(g.SimInstructions)/float64(g.SimCycles)) > 1e-12 || len(stats) != 2 {
			t.Errorf("projected %d: %+v", i, g)
			continue
		}
		for c := range stats {
			want := wantStats[c] * cycles / float64(r.SimCycles)
			if math.IsNaN(want) != math.IsNaN(stats[c]) || !math.IsNaN(want) && math.Abs(stats[c]-want) > 1e-9*want {
				t.Errorf("projected %d: statistic %d is %v, want %v", i, c, stats[c], want)
			}
		}
	}
}

// TestFullRunEstimate: a full run's seconds at the segments' rate.
func TestFullRunEstimate(t *testing.T) {
	if e := fullRunEstimate(10, 1000, 50000); e == nil || *e != 500 {
		t.Errorf("estimate %v, want 500", e)
	}
	if fullRunEstimate(0, 1000, 5) != nil || fullRunEstimate(3, 0, 5) != nil {
		t.Error("an estimate without a rate")
	}
}

// BenchmarkProjectSampled1M projects a Sieve plan of a million launches
// from its representatives' simulations and builds the sampled run's
// million kernels, statistics and all, for a store that only counts
// them: the glue's own cost, without the database's writes
// (BenchmarkRunKernels1M in package db times those).
func BenchmarkProjectSampled1M(b *testing.B) {
	const n = 1_000_000
	in := sampling.Input{Launches: make([]sampling.Launch, n)}
	names := make([]string, 50)
	for i := range names {
		names[i] = "_Z6kernel" + string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	for i := range in.Launches {
		in.Launches[i] = sampling.Launch{KernelID: i + 1, Name: names[i%len(names)], WarpInstructions: int64(1000 + (i*7919)%5000)}
	}
	plan, err := sampling.Sieve{}.Plan(in, sampling.Target{})
	if err != nil {
		b.Fatal(err)
	}
	counters := []cascade.StatCounter{{Name: "l2_hits", Kind: string(simstats.Aggregate)}, {Name: "dram_reads", Kind: string(simstats.Aggregate)}}
	table, err := runs.StatTable(cascade.Run{StatCounters: counters})
	if err != nil {
		b.Fatal(err)
	}
	var seg []cascade.RunKernel
	for h := range plan.Strata {
		for _, r := range plan.Strata[h].Representatives {
			id := r.KernelID
			seg = append(seg, cascade.RunKernel{KernelID: &id, Name: in.Launches[r.Launch].Name, SimCycles: 2 * in.Launches[r.Launch].WarpInstructions,
				SimInstructions: 32 * in.Launches[r.Launch].WarpInstructions, Stats: simstats.Encode(nil, []float64{10, 20})})
		}
	}
	segs := []cascade.Run{{ID: "s", StatCounters: counters}}
	b.ResetTimer()
	for b.Loop() {
		st := &kernelStore{kernels: map[string][]cascade.RunKernel{"s": seg}, count: map[string]int{}}
		m := &Coordinator{cfg: Config{Store: st}}
		sim, simK, err := m.segmentResults(context.Background(), plan, in, segs, nil, counters, table)
		if err != nil {
			b.Fatal(err)
		}
		pr, err := sampling.Project(plan, in, sim)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.storeProjection(context.Background(), "p", plan, in, pr, simK); err != nil {
			b.Fatal(err)
		}
		if st.count["p"] != n {
			b.Fatalf("%d kernels", st.count["p"])
		}
	}
	b.ReportMetric(float64(len(seg)), "representatives")
}

// runStore answers Run from a map: the runs reused segments are the same
// as.
type runStore struct {
	Store
	runs map[string]cascade.Run
}

func (s *runStore) Run(_ context.Context, id string) (cascade.Run, error) {
	r, ok := s.runs[id]
	if !ok {
		return r, cascade.Errorf(cascade.ENOTFOUND, "no run %s", id)
	}
	return r, nil
}

// TestWarming: a sampled run's segments are warmed unless one of them, or
// the run a reused one copies, records that its L2 could not be warmed,
// or was warmed in part (its trace lacks launches of the window).
func TestWarming(t *testing.T) {
	warmed := runs.Stamp("L2 warmed: 10 lines (1 KB, 0 of them written) from 2 earlier launches, by a kernel kernelwarm.traceg run first and left out of the results")
	cold := runs.Stamp(runs.NotWarmed + "the config's L2 is not known")
	st := &runStore{runs: map[string]cascade.Run{"old-warm": {History: []string{warmed}}, "old-cold": {History: []string{cold}}}}
	m := &Coordinator{cfg: Config{Store: st}}
	for _, tt := range []struct {
		name string
		segs []cascade.Run
		want sampling.Warming
	}{
		{"first launch and warmed", []cascade.Run{{}, {History: []string{warmed}}}, sampling.L2Warmed},
		{"one not warmed", []cascade.Run{{History: []string{warmed}}, {History: []string{cold}}}, sampling.Cold},
		{"reused, warmed", []cascade.Run{{SameAsID: cascade.Ptr("old-warm")}}, sampling.L2Warmed},
		{"reused, not warmed", []cascade.Run{{History: []string{warmed}}, {SameAsID: cascade.Ptr("old-cold")}}, sampling.Cold},
		{"one warmed in part", []cascade.Run{{History: []string{warmed}}, {History: []string{runs.Stamp(runs.WarmedInPart + "the window stopped after 0 earlier launches")}}}, sampling.Cold},
	} {
		got, err := m.warming(context.Background(), tt.segs)
		if err != nil || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := m.warming(context.Background(), []cascade.Run{{ID: "s", SameAsID: cascade.Ptr("gone")}}); err == nil {
		t.Error("no error for a reused segment whose run is gone")
	}
}
