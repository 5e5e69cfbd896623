package resolvers_test

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/client"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
)

// compareRuns compares trace t1's runs, a succeeded one on "good" and a
// failed one on "bad", and those of sweep s1, t1 on both.
type compareRuns struct {
	resolvers.Comparisons // what the tests do not call panics
	pages                 []cascade.Page
}

func (f *compareRuns) ConfigComparison(context.Context, string) ([]cascade.ConfigComparison, error) {
	return []cascade.ConfigComparison{
		{SimConfig: "bad", Runs: 1, Failed: 1},
		{SimConfig: "good", Run: &cascade.Run{ID: "r1", State: cascade.RunSucceeded}, Runs: 2, Succeeded: 1, Running: 1,
			Comparison: &cascade.RunComparison{KernelsCompared: 2, MAPE: 12.5, SimTotalNs: 300, MeasuredTotalNs: 250}},
	}, nil
}

func (f *compareRuns) ConfigComparisonKernels(ctx context.Context, traceID string, p cascade.Page) ([]cascade.ConfigComparison, cascade.PageOf[cascade.ConfigKernelErrors], error) {
	f.pages = append(f.pages, p)
	cs, _ := f.ConfigComparison(ctx, traceID)
	return cs, cascade.PageOf[cascade.ConfigKernelErrors]{Items: []cascade.ConfigKernelErrors{
		{Seq: 7, KernelID: 8, Name: "_Z6kernelv", Errors: []*float64{nil, cascade.Ptr(-10.0)}},
	}, HasNext: true, Total: 9}, nil
}

func (f *compareRuns) SweepGrid(context.Context, string) ([]cascade.SweepCell, error) {
	return []cascade.SweepCell{
		{TraceID: "t1", SimConfig: "good", Run: &cascade.Run{ID: "r1", State: cascade.RunSucceeded}, Runs: 1, Succeeded: 1,
			Comparison: &cascade.RunComparison{KernelsCompared: 2, MAPE: 12.5}},
		{TraceID: "t1", SimConfig: "bad", Run: &cascade.Run{ID: "r2", State: cascade.RunFailed}, Runs: 1},
	}, nil
}

// TestConfigComparisonAPI: Trace.configComparison gives each config's
// counts and figures, a config without a succeeded run null figures;
// configComparisonKernels pages errors aligned with simConfigs, null
// where a config has none; Sweep.grid gives each cell's n of m.
func TestConfigComparisonAPI(t *testing.T) {
	f := &compareRuns{}
	store := newStore(1, 0)
	store.sweeps = []cascade.Sweep{{ID: "s1", Seq: 1, TraceIDs: []string{"t1"}, SimConfigs: []string{"good", "bad"}}}
	c := client.New(graph.NewServer(&resolvers.Resolver{DB: store, Comparisons: f, Events: &events.Broker{}}, transport.Options{}))
	var r struct {
		Trace struct {
			ConfigComparison []struct {
				SimConfig                                   string
				Run                                         *struct{ ID string }
				Runs, Succeeded, Failed, Running, Cancelled int
				Comparison                                  *struct{ Mape, SimTotalNs, MeasuredTotalNs float64 }
			}
			ConfigComparisonKernels struct {
				SimConfigs []string
				TotalCount int
				Edges      []struct {
					Cursor string
					Node   struct {
						KernelID    int
						DisplayName string
						Errors      []*float64
					}
				}
				PageInfo struct{ HasNextPage bool }
			}
		}
		Sweep struct {
			Grid []struct {
				TraceID, SimConfig string
				Run                struct{ ID, State string }
				Runs, Succeeded    int
				Comparison         *struct{ Mape float64 }
			}
		}
	}
	const q = `{ trace(id: "t1") {
		configComparison { simConfig run { id } runs succeeded failed running cancelled comparison { mape simTotalNs measuredTotalNs } }
		configComparisonKernels(first: 1, after: "c2VxOjY") { simConfigs totalCount edges { cursor node { kernelId displayName errors } } pageInfo { hasNextPage } }
	}
	sweep(id: "s1") { grid { traceId simConfig run { id state } runs succeeded comparison { mape } } } }`
	if errs := post(t, c, q, &r); errs != nil {
		t.Fatal(errs)
	}
	cc := r.Trace.ConfigComparison
	if len(cc) != 2 || cc[0].SimConfig != "bad" || cc[0].Run != nil || cc[0].Comparison != nil || cc[0].Runs != 1 || cc[0].Succeeded != 0 || cc[0].Failed != 1 {
		t.Fatalf("bad config: %+v", cc)
	}
	if g := cc[1]; g.Run == nil || g.Run.ID != "r1" || g.Comparison == nil || g.Comparison.Mape != 12.5 || g.Comparison.SimTotalNs != 300 || g.Runs != 2 || g.Running != 1 {
		t.Fatalf("good config: %+v", g)
	}
	k := r.Trace.ConfigComparisonKernels
	if len(k.Edges) != 1 || k.TotalCount != 9 || !k.PageInfo.HasNextPage || len(k.SimConfigs) != 2 || k.SimConfigs[1] != "good" {
		t.Fatalf("kernels: %+v", k)
	}
	e := k.Edges[0]
	if e.Cursor != cascade.Cursor(7) || e.Node.KernelID != 8 || e.Node.DisplayName != "kernel" || len(e.Node.Errors) != 2 || e.Node.Errors[0] != nil || *e.Node.Errors[1] != -10 {
		t.Fatalf("kernel: %+v", e)
	}
	if len(f.pages) != 1 || f.pages[0].First != 1 || f.pages[0].After != "c2VxOjY" || !f.pages[0].Count {
		t.Errorf("pages asked: %+v", f.pages)
	}
	g := r.Sweep.Grid
	if len(g) != 2 || g[1].Run.State != "FAILED" || g[1].Succeeded != 0 || g[1].Runs != 1 || g[1].Comparison != nil || g[0].Comparison == nil {
		t.Fatalf("grid: %+v", g)
	}
}
