package resolvers_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/client"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/results"
)

// kernelStore is the API's fake store and a results.Store holding its
// runs' kernels, so that a real results.Reader computes what the API
// serves.
type kernelStore struct {
	results.Store // what the tests do not call panics
	*fakeStore
	kernels map[string][]cascade.RunKernel
}

func (s *kernelStore) Sweep(ctx context.Context, id string) (cascade.Sweep, error) {
	return s.fakeStore.Sweep(ctx, id)
}

func (s *kernelStore) Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	return s.fakeStore.Kernels(ctx, traceID, search, p)
}

func (s *kernelStore) KernelCounters(ctx context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error) {
	return s.fakeStore.KernelCounters(ctx, traceID, from, to)
}

func (s *kernelStore) Trace(ctx context.Context, id string) (cascade.Trace, error) {
	return s.fakeStore.Trace(ctx, id)
}

func (s *kernelStore) Run(ctx context.Context, id string) (cascade.Run, error) {
	return s.fakeStore.Run(ctx, id)
}

func (s *kernelStore) RunKernels(_ context.Context, id string) ([]cascade.RunKernel, error) {
	return slices.Clone(s.kernels[id]), nil
}

func (s *kernelStore) RunKernelPage(_ context.Context, id string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error) {
	var out cascade.PageOf[cascade.RunKernel]
	limit, err := p.Limit()
	if err != nil {
		return out, err
	}
	after, has, err := cascade.ParseCursor(p.After)
	if err != nil {
		return out, err
	}
	ks := s.kernels[id]
	if p.Count {
		out.Total = int64(len(ks))
	}
	for _, k := range ks {
		if has && int64(k.Seq) <= after {
			continue
		}
		if len(out.Items) == limit {
			out.HasNext = true
			break
		}
		out.Items = append(out.Items, k)
	}
	return out, nil
}

// statsRun is a run of three kernels whose counters are those of the
// built-in table: kernel 0 has every value, kernel 1 has l2_read_hits
// printed as -nan, kernel 2 has no statistics at all.
func statsRun(t *testing.T) (*kernelStore, *client.Client, simstats.Values) {
	t.Helper()
	tab := simstats.Builtin()
	store := &kernelStore{fakeStore: newStore(1, 1), kernels: map[string][]cascade.RunKernel{}}
	run := &store.fakeStore.runs[0]
	for _, c := range tab.Counters {
		run.StatCounters = append(run.StatCounters, cascade.StatCounter{Name: c.Name, Kind: string(c.Kind), Unit: c.Unit})
	}
	run.State, run.FailureClass, run.FailureLine = cascade.RunFailed, cascade.FailureDeadlock, "GPGPU-Sim uArch: ERROR ** deadlock detected"
	run.Figures = cascade.RunFigures{WallSeconds: 12.5, PeakRSSBytes: 1 << 30, SimulatorBuild: "Accel-Sim [build a]; GPGPU-Sim [build b]", TraceSum: "abc"}
	values := func(l2hits float64, seed float64) simstats.Values {
		v := make(simstats.Values, len(tab.Counters))
		for i := range v {
			v[i] = seed + float64(i)
		}
		v[tab.Index("l2_read_hits")] = l2hits
		v[tab.Index("l2_read_accesses")] = 100
		return v
	}
	v0, v1 := values(25, 1), values(simstats.Absent, 10)
	store.kernels["r1"] = []cascade.RunKernel{
		{RunID: "r1", Seq: 0, Name: "k0", Stats: simstats.Encode(nil, v0)},
		{RunID: "r1", Seq: 1, Name: "k1", Stats: simstats.Encode(nil, v1)},
		{RunID: "r1", Seq: 2, Name: "k2"},
	}
	rd := results.New(results.Config{Store: store, BucketDir: t.TempDir()})
	r := &resolvers.Resolver{DB: store, Results: rd, Events: &events.Broker{}}
	return store, client.New(graph.NewServer(r, transport.Options{})), v0
}

type statsAnswer struct {
	Run struct {
		FailureClass *string
		FailureLine  *string
		Figures      struct {
			WallSeconds    *float64
			PeakRssBytes   *int64
			CoreClockMHz   *float64
			SimulatorBuild *string
			TraceSum       *string
			ConfigSum      *string
		}
		StatCounters []struct{ Name, Kind, Unit string }
		StatTotals   []*float64
		StatKernels  []int
		Kernels      []struct{ StatValues []*float64 }
		KernelPage   struct {
			TotalCount int
			PageInfo   struct {
				HasNextPage bool
				EndCursor   *string
			}
			Nodes []struct {
				Name       string
				StatValues []*float64
			}
		}
	}
}

const statsQuery = `{ run(id: "r1") {
	failureClass failureLine
	figures { wallSeconds peakRssBytes coreClockMHz simulatorBuild traceSum configSum }
	statCounters { name kind unit } statTotals statKernels
	kernels { statValues }
	kernelPage(first: 2) { totalCount pageInfo { hasNextPage endCursor } nodes { name statValues } }
} }`

// TestRunStatistics: a run's counters come with the derived hit rates
// after them; each kernel's values are aligned with them, null where
// absent (-nan, or no statistics); the run's totals are the sums of
// aggregate counters, and its hit rate comes from summed counters, not a
// mean of kernels' rates.
func TestRunStatistics(t *testing.T) {
	_, c, v0 := statsRun(t)
	tab := simstats.Builtin()
	var a statsAnswer
	if errs := post(t, c, statsQuery, &a); len(errs) > 0 {
		t.Fatal(errs)
	}
	r := a.Run
	n := len(tab.Counters)
	if len(r.StatCounters) != n+len(simstats.RatiosOf(simstats.Builtin())) {
		t.Fatalf("%d counters, want %d and %d derived", len(r.StatCounters), n, len(simstats.RatiosOf(simstats.Builtin())))
	}
	if c := r.StatCounters[tab.Index("cycles")]; c.Kind != "AGGREGATE" || c.Unit != "cycles" {
		t.Errorf("cycles: %+v", c)
	}
	if c := r.StatCounters[tab.Index("ipc")]; c.Kind != "KERNEL" {
		t.Errorf("ipc: %+v", c)
	}
	if c := r.StatCounters[tab.Index("sim_rate_insts")]; c.Kind != "RATE" {
		t.Errorf("sim_rate_insts: %+v", c)
	}
	hitRate := n // l2_read_hit_rate, the first derived
	if c := r.StatCounters[hitRate]; c.Name != "l2_read_hit_rate" || c.Kind != "DERIVED" || c.Unit != "fraction" {
		t.Errorf("first derived: %+v", c)
	}

	if len(r.Kernels) != 3 {
		t.Fatalf("%d kernels", len(r.Kernels))
	}
	k0, k1, k2 := r.Kernels[0].StatValues, r.Kernels[1].StatValues, r.Kernels[2].StatValues
	for _, k := range [][]*float64{k0, k1, k2} {
		if len(k) != len(r.StatCounters) {
			t.Fatalf("%d values for %d counters", len(k), len(r.StatCounters))
		}
	}
	cycles := tab.Index("cycles")
	if k0[cycles] == nil || *k0[cycles] != v0[cycles] {
		t.Errorf("kernel 0 cycles = %v, want %v", k0[cycles], v0[cycles])
	}
	if k0[hitRate] == nil || *k0[hitRate] != 0.25 {
		t.Errorf("kernel 0 l2_read_hit_rate = %v, want 0.25", k0[hitRate])
	}
	hits := tab.Index("l2_read_hits")
	if k1[hits] != nil || k1[hitRate] != nil {
		t.Errorf("kernel 1's -nan l2_read_hits: %v, rate %v; want both null", k1[hits], k1[hitRate])
	}
	if k1[cycles] == nil {
		t.Error("kernel 1's cycles are missing")
	}
	if slices.ContainsFunc(k2, func(v *float64) bool { return v != nil }) {
		t.Errorf("kernel 2 has no statistics, yet %v", k2)
	}

	if len(r.StatTotals) != len(r.StatCounters) || len(r.StatKernels) != len(r.StatCounters) {
		t.Fatalf("%d totals and %d kernel counts for %d counters", len(r.StatTotals), len(r.StatKernels), len(r.StatCounters))
	}
	if got := r.StatTotals[cycles]; got == nil || *got != v0[cycles]+(10+float64(cycles)) || r.StatKernels[cycles] != 2 {
		t.Errorf("total cycles = %v over %d kernels, want the sum of kernels 0 and 1", got, r.StatKernels[cycles])
	}
	ipc := tab.Index("ipc")
	if got := r.StatTotals[ipc]; got == nil || *got != (1+10+2*float64(ipc))/2 {
		t.Errorf("run ipc = %v, want the mean", got)
	}
	rate := tab.Index("sim_rate_insts")
	if got := r.StatTotals[rate]; got == nil || *got != 10+float64(rate) {
		t.Errorf("run sim_rate_insts = %v, want the last kernel's", got)
	}
	// The run's rate is of its summed counters, as simstats.Derive has
	// it: 25 hits (kernel 1's are absent) over 200 accesses; only kernel
	// 0 had a rate of its own.
	if got := r.StatTotals[hitRate]; got == nil || math.Abs(*got-25.0/200) > 1e-12 || r.StatKernels[hitRate] != 1 {
		t.Errorf("run l2_read_hit_rate = %v over %d kernels, want 25/200 over 1", got, r.StatKernels[hitRate])
	}

	if r.FailureClass == nil || *r.FailureClass != "DEADLOCK" || r.FailureLine == nil || *r.FailureLine != "GPGPU-Sim uArch: ERROR ** deadlock detected" {
		t.Errorf("failure %v: %v", r.FailureClass, r.FailureLine)
	}
	f := r.Figures
	if f.WallSeconds == nil || *f.WallSeconds != 12.5 || f.PeakRssBytes == nil || *f.PeakRssBytes != 1<<30 || f.CoreClockMHz != nil ||
		f.SimulatorBuild == nil || *f.SimulatorBuild != "Accel-Sim [build a]; GPGPU-Sim [build b]" || f.TraceSum == nil || f.ConfigSum != nil {
		t.Errorf("figures: %+v", f)
	}

	p := r.KernelPage
	if p.TotalCount != 3 || !p.PageInfo.HasNextPage || len(p.Nodes) != 2 || p.Nodes[1].Name != "k1" || p.Nodes[1].StatValues[hits] != nil ||
		p.Nodes[0].StatValues[cycles] == nil || *p.Nodes[0].StatValues[cycles] != v0[cycles] {
		t.Fatalf("first page: %+v", p)
	}
	var next struct {
		Run struct {
			KernelPage struct {
				PageInfo struct{ HasNextPage bool }
				Nodes    []struct {
					Name       string
					StatValues []*float64
				}
			}
		}
	}
	if errs := post(t, c, `query($after: String) { run(id: "r1") { kernelPage(first: 2, after: $after) { pageInfo { hasNextPage } nodes { name statValues } } } }`,
		&next, client.Var("after", *p.PageInfo.EndCursor)); len(errs) > 0 {
		t.Fatal(errs)
	}
	if np := next.Run.KernelPage; np.PageInfo.HasNextPage || len(np.Nodes) != 1 || np.Nodes[0].Name != "k2" || len(np.Nodes[0].StatValues) != len(r.StatCounters) {
		t.Errorf("second page: %+v", np)
	}
}

// TestRunWithoutStatistics: a run that has not started has no counters,
// totals or values, and no failure class.
func TestRunWithoutStatistics(t *testing.T) {
	store, c, _ := statsRun(t)
	run := &store.fakeStore.runs[0]
	run.StatCounters, run.FailureClass, run.FailureLine, run.Figures = nil, "", "", cascade.RunFigures{}
	var a statsAnswer
	if errs := post(t, c, statsQuery, &a); len(errs) > 0 {
		t.Fatal(errs)
	}
	r := a.Run
	if r.StatCounters == nil || len(r.StatCounters) != 0 || r.StatTotals == nil || len(r.StatTotals) != 0 || len(r.StatKernels) != 0 {
		t.Errorf("counters %v, totals %v, kernels %v; want empty lists", r.StatCounters, r.StatTotals, r.StatKernels)
	}
	if len(r.Kernels) != 3 || r.Kernels[0].StatValues == nil || len(r.Kernels[0].StatValues) != 0 {
		t.Errorf("kernels: %+v", r.Kernels)
	}
	if r.FailureClass != nil || r.FailureLine != nil || r.Figures.WallSeconds != nil || r.Figures.SimulatorBuild != nil {
		t.Errorf("failure %v %v, figures %+v; want nulls", r.FailureClass, r.FailureLine, r.Figures)
	}
}

// TestRunsByFailureClassArgument: runs(failureClass:) narrows the list.
func TestRunsByFailureClassArgument(t *testing.T) {
	store := newStore(1, 3)
	store.runs[0].FailureClass, store.runs[2].FailureClass = cascade.FailureDeadlock, cascade.FailureAssertion
	c := newClient(store)
	var a struct {
		Runs struct {
			Nodes []struct{ ID, FailureClass string }
		}
	}
	if errs := post(t, c, `{ runs(failureClass: DEADLOCK) { nodes { id failureClass } } }`, &a); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(a.Runs.Nodes) != 1 || a.Runs.Nodes[0].ID != "r1" || a.Runs.Nodes[0].FailureClass != "DEADLOCK" {
		t.Errorf("DEADLOCK runs: %+v", a.Runs.Nodes)
	}
	if errs := post(t, c, `{ runs(failureClass: NOT_A_CLASS) { nodes { id } } }`, nil); len(errs) == 0 {
		t.Error("an unknown failure class was accepted")
	}
}
