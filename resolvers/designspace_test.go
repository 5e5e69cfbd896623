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

// designRuns gives sweep s1's design space, and records the baselines
// asked for.
type designRuns struct {
	resolvers.Comparisons // what the tests do not call panics
	baselines             []string
}

func (f *designRuns) DesignSpace(_ context.Context, id, baseline string) (*cascade.DesignSpace, error) {
	f.baselines = append(f.baselines, baseline)
	if baseline == "nope" {
		return nil, cascade.Errorf(cascade.EINVALID, "baseline: %q is not a cell of sweep %s", baseline, id)
	}
	return &cascade.DesignSpace{
		Axes:     []cascade.SweepAxis{{Option: "-gpgpu_n_clusters", Values: []string{"40", "80"}}},
		Baseline: "v80",
		Cells: []cascade.DesignCell{
			{SimConfig: "v40", Base: "SM7_QV100", Values: []string{"40"}, Runs: 1, Succeeded: 1, Timed: 1, Cycles: cascade.Ptr(6000.0),
				TimeNs: cascade.Ptr(6000.0), Speedup: cascade.Ptr(0.5), Sampled: 1, TimeLowNs: cascade.Ptr(5000.0), TimeHighNs: cascade.Ptr(7000.0)},
			{SimConfig: "v80", Base: "SM7_QV100", Values: []string{"80"}, Shipped: true, Runs: 1},
		},
		Kernels: []cascade.DesignKernel{{Name: "k", TimeNs: []*float64{cascade.Ptr(1.0), nil}, Speedup: []*float64{nil, nil}}},
		Steps:   []cascade.DesignStep{},
	}, nil
}

// TestDesignSpaceAPI: Sweep.designSpace passes its baseline on (none: ""),
// gives each cell's figures, null where there are none, kernels' figures
// aligned with the cells, and an unknown baseline's error.
func TestDesignSpaceAPI(t *testing.T) {
	f := &designRuns{}
	store := newStore(1, 0)
	store.sweeps = []cascade.Sweep{{ID: "s1", Seq: 1, TraceIDs: []string{"t1"}, SimConfigs: []string{"v40", "v80"}}}
	c := client.New(graph.NewServer(&resolvers.Resolver{DB: store, Comparisons: f, Events: &events.Broker{}}, transport.Options{}))
	var r struct {
		Sweep struct {
			DesignSpace struct {
				Axes     []struct{ Option string }
				Baseline string
				Cells    []struct {
					SimConfig, Base      string
					Values               []string
					Shipped              bool
					Succeeded            int
					TimeNs, Speedup      *float64
					TimeLowNs, SpeedupLo *float64
				}
				Kernels []struct {
					Name   string
					TimeNs []*float64
				}
			}
		}
	}
	c.MustPost(`{ sweep(id: "s1") { designSpace { axes { option } baseline cells { simConfig base values shipped succeeded timeNs speedup timeLowNs speedupLo: speedupLow } kernels { name timeNs } } } }`, &r)
	ds := r.Sweep.DesignSpace
	if ds.Baseline != "v80" || len(ds.Axes) != 1 || ds.Axes[0].Option != "-gpgpu_n_clusters" || len(ds.Cells) != 2 {
		t.Fatalf("%+v", ds)
	}
	c0, c1 := ds.Cells[0], ds.Cells[1]
	if c0.Values[0] != "40" || *c0.TimeNs != 6000 || *c0.Speedup != 0.5 || *c0.TimeLowNs != 5000 || c0.SpeedupLo != nil || !c1.Shipped || c1.TimeNs != nil {
		t.Errorf("cells %+v", ds.Cells)
	}
	if k := ds.Kernels[0]; k.Name != "k" || len(k.TimeNs) != 2 || *k.TimeNs[0] != 1 || k.TimeNs[1] != nil {
		t.Errorf("kernels %+v", ds.Kernels)
	}
	c.MustPost(`{ sweep(id: "s1") { designSpace(baseline: "v40") { baseline } } }`, &r)
	err := c.Post(`{ sweep(id: "s1") { designSpace(baseline: "nope") { baseline } } }`, &r)
	if err == nil {
		t.Error("an unknown baseline is an error")
	}
	if want := []string{"", "v40", "nope"}; len(f.baselines) != 3 || f.baselines[1] != "v40" || f.baselines[0] != "" {
		t.Errorf("baselines %q, want %q", f.baselines, want)
	}
}
