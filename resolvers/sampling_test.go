package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/sampling/plans"
)

// planStore is the fake store with kernels, paged by seq as package db
// pages them, and sampling plans in memory: package plans runs on it.
type planStore struct {
	*fakeStore
	kernels map[string][]cascade.Kernel

	mu         sync.Mutex
	plans      []cascade.SamplingPlan // with their strata
	strataRead int
}

func (s *planStore) Kernels(_ context.Context, traceID, _ string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	var out cascade.PageOf[cascade.Kernel]
	limit, err := p.Limit()
	if err != nil {
		return out, err
	}
	after, ok, err := cascade.ParseCursor(p.After)
	if err != nil {
		return out, err
	}
	for _, k := range s.kernels[traceID] {
		if ok && int64(k.Seq) <= after {
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

func (s *planStore) CreateSamplingPlan(_ context.Context, p *cascade.SamplingPlan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.Seq, p.CreatedAt = int64(len(s.plans)+1), time.Now().UTC()
	s.plans = append(s.plans, *p)
	return nil
}

func (s *planStore) SamplingPlan(_ context.Context, id string) (cascade.SamplingPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.plans {
		if p.ID == id {
			p.Strata = nil
			return p, nil
		}
	}
	return cascade.SamplingPlan{}, cascade.Errorf(cascade.ENOTFOUND, "sampling plan %q not found", id)
}

func (s *planStore) SamplingPlans(_ context.Context, traceID string) ([]cascade.SamplingPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []cascade.SamplingPlan
	for _, p := range slices.Backward(s.plans) {
		if p.TraceID == traceID {
			p.Strata = nil
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *planStore) SamplingStrata(_ context.Context, id string) ([]cascade.SamplingStratum, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strataRead++
	for _, p := range s.plans {
		if p.ID == id {
			return p.Strata, nil
		}
	}
	return nil, nil
}

// newPlanClient serves the schema on a plan store holding trace t1,
// ready, with 3,000 launches and real timing; t2, ready, without; t3,
// processing.
func newPlanClient(t *testing.T) (*client.Client, *planStore) {
	t.Helper()
	store := &planStore{fakeStore: newStore(3, 0), kernels: map[string][]cascade.Kernel{}}
	store.traces[0].HasRealTiming = true
	store.traces[2].State = cascade.TraceProcessing
	bucket := t.TempDir()
	type row struct {
		KernelID   int     `json:"kernel_id"`
		DurationNs float64 `json:"duration_ns"`
	}
	var rows []row
	for i := range 3000 {
		name := fmt.Sprintf("_ZN4vllm7kernel%dEv", i%5)
		k := cascade.Kernel{Seq: i, KernelID: i + 1, Name: name, TraceFile: fmt.Sprintf("kernel-%d.trace", i+1),
			GridX: 64 << (i % 5), GridY: 1, GridZ: 1, BlockX: 128, BlockY: 1, BlockZ: 1, Instructions: cascade.Ptr(int64(1000 << (i % 5)))}
		store.kernels["t1"] = append(store.kernels["t1"], k)
		store.kernels["t2"] = append(store.kernels["t2"], k)
		rows = append(rows, row{i + 1, float64(int(1000)<<(i%5)) * (1 + 0.1*math.Sin(float64(i)))})
	}
	b, _ := json.Marshal(rows)
	if err := os.MkdirAll(filepath.Join(bucket, "t1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bucket, "t1", "real_timing.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &resolvers.Resolver{DB: store, Runs: fakeRuns{}, Events: &events.Broker{},
		Sampling: &plans.Service{Store: store, BucketDir: bucket}}
	return client.New(graph.NewServer(r, transport.Options{})), store
}

// planFields are the fields the tests read of a plan.
const planFields = `id trace { id } method basis targetError targetInstructions errorBound warmup warmupStep launches
	untimedLaunches instructions samples simulatedLaunches simulatedInstructions simulatedFraction
	total estimate expectedError ciLow ciHigh createdAt
	strata { name displayName grid { x y z } block { x } size meanDurationNs cvDuration meanInstructions cvInstructions
		why allocation cost varianceShare
		representatives { launch kernelId context weight durationNs instructions warmup { launch kernelId } } }
	traceRanges { context start end firstLaunch lastLaunch launches representatives }
	traceList`

type planJSON struct {
	ID                                                string
	Trace                                             struct{ ID string }
	Method, Basis                                     string
	TargetError                                       *float64
	TargetInstructions                                *int64
	ErrorBound                                        float64
	Warmup, Launches, UntimedLaunches                 int
	WarmupStep                                        bool
	Instructions                                      int64
	Samples, SimulatedLaunches                        int
	SimulatedInstructions                             int64
	SimulatedFraction, Total, Estimate, ExpectedError float64
	CILow, CIHigh                                     float64
	Strata                                            []struct {
		Name, DisplayName string
		Grid              *struct{ X, Y, Z int }
		Block             *struct{ X int }
		Size              int
		MeanDurationNs    *float64
		CVDuration        *float64
		MeanInstructions  float64
		CVInstructions    float64
		Why               string
		Allocation        float64
		Cost              int64
		VarianceShare     float64
		Representatives   []struct {
			Launch, KernelID int
			Context          *string
			Weight           float64
			DurationNs       *float64
			Instructions     int64
			Warmup           []struct{ Launch, KernelID int }
		}
	}
	TraceRanges []struct {
		Context                                                        *string
		Start, End, FirstLaunch, LastLaunch, Launches, Representatives int
	}
	TraceList string
}

// TestPlanSampling plans a trace with real timing by default (STEM) and
// one without (SIEVE), and reads the plans back by id and by trace, with
// their strata, ranges and trace list.
func TestPlanSampling(t *testing.T) {
	c, store := newPlanClient(t)
	var r struct{ PlanSampling planJSON }
	if errs := post(t, c, `mutation { planSampling(traceId: "t1") { `+planFields+` } }`, &r); errs != nil {
		t.Fatal(errs)
	}
	p := r.PlanSampling
	if p.ID == "" || p.Trace.ID != "t1" || p.Method != "STEM" || p.Basis != "DURATION" || *p.TargetError != 0.01 ||
		p.TargetInstructions != nil || p.ErrorBound != 0.01 || p.Warmup < 1 || !p.WarmupStep || p.Launches != 3000 || p.UntimedLaunches != 0 {
		t.Fatalf("plan %+v", p)
	}
	if len(p.Strata) < 5 || p.Samples < len(p.Strata) || p.SimulatedLaunches < p.Samples || !(p.SimulatedFraction > 0 && p.SimulatedFraction < 1) ||
		!(p.CILow <= p.Estimate && p.Estimate <= p.CIHigh) || p.ExpectedError > 0.01 || p.Total <= 0 {
		t.Fatalf("figures of %+v", p)
	}
	samples, launches := 0, 0
	shares, costs := 0.0, int64(0)
	for _, s := range p.Strata {
		if s.Grid == nil || s.Block.X != 128 || s.MeanDurationNs == nil || s.CVDuration == nil || s.DisplayName != "vllm::"+strings.TrimSuffix(strings.TrimPrefix(s.Name, "_ZN4vllm7"), "Ev") {
			t.Fatalf("stratum %+v", s)
		}
		w := 0.0
		for _, rep := range s.Representatives {
			w += rep.Weight
			if rep.KernelID != rep.Launch+1 || rep.DurationNs == nil || rep.Context != nil ||
				len(rep.Warmup) > p.Warmup || len(rep.Warmup) > 0 && (rep.Warmup[len(rep.Warmup)-1].Launch != rep.Launch-1 || rep.Warmup[len(rep.Warmup)-1].KernelID != rep.Launch) {
				t.Fatalf("representative %+v", rep)
			}
		}
		if math.Abs(w-float64(s.Size)) > 1e-9 {
			t.Fatalf("stratum %s: weights %g, size %d", s.Name, w, s.Size)
		}
		if s.Why == "" || s.Cost < 0 || s.VarianceShare < 0 || s.VarianceShare > 1 {
			t.Fatalf("stratum %s: why %q, cost %d, variance share %g", s.Name, s.Why, s.Cost, s.VarianceShare)
		}
		shares += s.VarianceShare
		costs += s.Cost
		samples += len(s.Representatives)
	}
	for _, rg := range p.TraceRanges {
		launches += rg.Launches
		if !strings.Contains(p.TraceList, fmt.Sprintf("\nDYNAMIC_KERNEL_LIMIT_START=%d DYNAMIC_KERNEL_LIMIT_END=%d TERMINATE_UPON_LIMIT=1\n", rg.Start, rg.End)) {
			t.Fatalf("trace list lacks range %+v:\n%s", rg, p.TraceList)
		}
	}
	if math.Abs(shares-1) > 1e-9 || costs != p.SimulatedInstructions {
		t.Fatalf("strata's variance shares sum to %g, costs to %d (the plan simulates %d)", shares, costs, p.SimulatedInstructions)
	}
	if samples != p.Samples || launches != p.SimulatedLaunches || !strings.HasPrefix(p.TraceList, "# Cascade sampling plan "+p.ID+" of trace t1: STEM") {
		t.Fatalf("%d samples, %d launches in ranges; plan: %d, %d; trace list:\n%s", samples, launches, p.Samples, p.SimulatedLaunches, p.TraceList)
	}

	// Read back: the same plan, its strata from the store.
	var q struct{ SamplingPlan planJSON }
	if errs := post(t, c, `query($id: ID!) { samplingPlan(id: $id) { `+planFields+` } }`, &q, client.Var("id", p.ID)); errs != nil {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(q.SamplingPlan, p) {
		t.Fatalf("read back\n%+v\nplanned\n%+v", q.SamplingPlan, p)
	}
	if store.strataRead == 0 {
		t.Fatal("the strata of a stored plan were not read from the store")
	}

	var s struct{ PlanSampling planJSON }
	if errs := post(t, c, `mutation { planSampling(traceId: "t2", target: {error: 0.05}, warmup: 0) { `+planFields+` } }`, &s); errs != nil {
		t.Fatal(errs)
	}
	if u := s.PlanSampling; u.Method != "SIEVE" || u.Basis != "INSTRUCTIONS" || *u.TargetError != 0.05 || u.Warmup != 0 || u.SimulatedLaunches != u.Samples || len(u.Strata) != 5 {
		t.Fatalf("plan of t2 %+v", u)
	}
	var b struct{ PlanSampling planJSON }
	if errs := post(t, c, `mutation { planSampling(traceId: "t1", method: SIEVE, target: {instructions: 200000}) { `+planFields+` } }`, &b); errs != nil {
		t.Fatal(errs)
	}
	if u := b.PlanSampling; u.Method != "SIEVE" || u.TargetError != nil || *u.TargetInstructions != 200000 || u.SimulatedInstructions > 200000 {
		t.Fatalf("plan under a budget %+v", u)
	}

	var tr struct {
		Trace struct {
			SamplingPlans []struct {
				ID     string
				Method string
			}
		}
	}
	if errs := post(t, c, `{ trace(id: "t1") { samplingPlans { id method } } }`, &tr); errs != nil {
		t.Fatal(errs)
	}
	if got := tr.Trace.SamplingPlans; len(got) != 2 || got[0].ID != b.PlanSampling.ID || got[1].ID != p.ID {
		t.Fatalf("plans of t1 %+v, want the budget's then the first", got)
	}
	if errs := post(t, c, `{ trace(id: "t3") { samplingPlans { id } } }`, &tr); errs != nil || tr.Trace.SamplingPlans == nil || len(tr.Trace.SamplingPlans) != 0 {
		t.Fatalf("plans of t3: %+v, %v; want none", tr.Trace.SamplingPlans, errs)
	}
}

// TestPlanSamplingErrors: NOT_FOUND for an unknown trace or plan id;
// BAD_USER_INPUT for a trace not READY, STEM without timing, a target or
// warm-up out of range. An unknown method is not a SamplingMethod: the
// schema refuses it, literal or variable, before any resolver runs.
func TestPlanSamplingErrors(t *testing.T) {
	c, store := newPlanClient(t)
	for _, tt := range []struct {
		query string
		vars  map[string]any
		code  string
	}{
		{`mutation { planSampling(traceId: "nope") { id } }`, nil, cascade.ENOTFOUND},
		{`{ samplingPlan(id: "nope") { id } }`, nil, cascade.ENOTFOUND},
		{`mutation { planSampling(traceId: "t3") { id } }`, nil, cascade.ECONFLICT}, // not READY: as launchRun
		{`mutation { planSampling(traceId: "t2", method: STEM) { id } }`, nil, cascade.EINVALID},
		{`mutation($m: SamplingMethod) { planSampling(traceId: "t1", method: $m) { id } }`, map[string]any{"m": "PKS"}, "GRAPHQL_VALIDATION_FAILED"},
		{`mutation { planSampling(traceId: "t1", method: PKS) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{`mutation { planSampling(traceId: "t1", target: {error: 0}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", target: {error: 1.5}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", target: {error: -0.01}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", target: {instructions: 0}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", target: {instructions: 5}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", target: {error: 0.01, instructions: 5000000}) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", warmup: -1) { id } }`, nil, cascade.EINVALID},
		{`mutation { planSampling(traceId: "t1", warmup: 65) { id } }`, nil, cascade.EINVALID},
	} {
		var opts []client.Option
		for k, v := range tt.vars {
			opts = append(opts, client.Var(k, v))
		}
		var data map[string]any
		errs := post(t, c, tt.query, &data, opts...)
		if len(errs) != 1 || errs[0].Extensions.Code != tt.code {
			t.Fatalf("%s %v: %+v, want one %s", tt.query, tt.vars, errs, tt.code)
		}
		for k, v := range data {
			if v != nil {
				t.Fatalf("%s: data %s = %v, want null", tt.query, k, v)
			}
		}
	}
	if len(store.plans) != 0 {
		t.Fatalf("%d plans stored by refused requests", len(store.plans))
	}
}
