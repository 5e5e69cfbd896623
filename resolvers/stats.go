package resolvers

import (
	"context"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/graph/model"
	"github.com/cascade-sim/cascade/runs"
)

type statTablesKey struct{}

// statTables are the statistics tables of the runs whose kernels one
// response lists, by run id: Run.kernels and Run.kernelPage note their
// run's, so that each kernel's RunKernel.statValues decodes its values
// without reading the run again.
type statTables struct {
	mu    sync.Mutex
	byRun map[string]*simstats.Table
}

// noteStatTable records r's table for the response's kernels of r.
func noteStatTable(ctx context.Context, r cascade.Run) error {
	t, err := runs.StatTable(r)
	if err != nil {
		return err
	}
	if l, _ := ctx.Value(statTablesKey{}).(*statTables); l != nil {
		l.mu.Lock()
		l.byRun[r.ID] = t
		l.mu.Unlock()
	}
	return nil
}

// statTable returns the table of the run with the given id: the one its
// kernels' field noted, or, outside a response that noted it, the
// stored run's.
func (r *Resolver) statTable(ctx context.Context, runID string) (*simstats.Table, error) {
	l, _ := ctx.Value(statTablesKey{}).(*statTables)
	if l != nil {
		l.mu.Lock()
		t, ok := l.byRun[runID]
		l.mu.Unlock()
		if ok {
			return t, nil
		}
	}
	run, err := r.DB.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	t, err := runs.StatTable(run)
	if err == nil && l != nil {
		l.mu.Lock()
		l.byRun[runID] = t
		l.mu.Unlock()
	}
	return t, err
}

// statKinds are the API's kinds of statistics, by package runs' names.
var statKinds = map[string]model.StatKind{
	string(simstats.Aggregate): model.StatKindAggregate,
	string(simstats.PerKernel): model.StatKindKernel,
	string(simstats.Rate):      model.StatKindRate,
	runs.DerivedKind:           model.StatKindDerived,
}

// statCounters is r's statistics as the API lists them.
func statCounters(r cascade.Run) []model.StatCounter {
	cs := runs.StatColumns(r)
	out := make([]model.StatCounter, len(cs))
	for i, c := range cs {
		out[i] = model.StatCounter{Name: c.Name, Kind: statKinds[c.Kind], Unit: c.Unit}
	}
	return out
}

// figures is a run's own figures, null where unknown (zero).
func figures(f cascade.RunFigures) *model.RunFigures {
	pos := func(v float64) *float64 {
		if v > 0 {
			return &v
		}
		return nil
	}
	str := func(s string) *string {
		if s != "" {
			return &s
		}
		return nil
	}
	out := &model.RunFigures{CoreClockMHz: pos(f.CoreClockMHz), WallSeconds: pos(f.WallSeconds),
		SimulatorBuild: str(f.SimulatorBuild), SimulatorSum: str(f.SimulatorSum), ConfigSum: str(f.ConfigSum), TraceSum: str(f.TraceSum)}
	if f.PeakRSSBytes > 0 {
		out.PeakRssBytes = &f.PeakRSSBytes
	}
	if f.SimCycles > 0 {
		out.SimCycles = &f.SimCycles
	}
	return out
}

// kernelConnection is a page of a run's kernels as a connection.
func kernelConnection(p cascade.PageOf[cascade.RunKernel]) *model.RunKernelConnection {
	if p.Items == nil {
		p.Items = []cascade.RunKernel{}
	}
	c := &model.RunKernelConnection{Nodes: p.Items, TotalCount: int(p.Total), PageInfo: &model.PageInfo{HasNextPage: p.HasNext},
		Edges: make([]model.RunKernelEdge, len(p.Items))}
	for i := range p.Items {
		c.Edges[i] = model.RunKernelEdge{Cursor: cascade.Cursor(int64(p.Items[i].Seq)), Node: &p.Items[i]}
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return c
}
