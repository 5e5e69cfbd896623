package runs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/tracedir"
)

// KernelRow is one simulated kernel of a run, with its measured time when
// the trace has one.
type KernelRow struct {
	KernelID        int
	Context         *string
	Name            string
	LaunchUID       *int
	SimCycles       *int64
	SimInstructions *int64
	IPC             *float64
	SimTimeNs       *float64 // SimCycles / core clock
	MeasuredNs      *float64
	ErrorPct        *float64 // 100 * (sim - measured) / measured
	Truncated       bool
}

// Results is what a run's kernels say, joined with the trace's measured
// timing and step timeline.
type Results struct {
	Kernels    []KernelRow
	Comparison *Comparison // nil when the trace has no usable real timing
	Steps      []StepProjection
	// Problems lists bad rows of the timing files, skipped.
	Problems []string
}

// Results computes a run's results from its stored kernel results, its
// config's core clock and the trace's timing files. Bad timing rows are
// reported in Problems and skipped. A query asks for kernels, comparison
// and steps separately, so the last few results are kept, by run and
// version: a run's results change only when its row or its trace's row
// (the timing flags) does.
func (m *Manager) Results(ctx context.Context, r cascade.Run) (Results, error) {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return Results{}, err
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano(), "@", t.UpdatedAt.UnixNano())
	m.resultsMu.Lock()
	res, ok := m.results[key]
	m.resultsMu.Unlock()
	if ok {
		return res, nil
	}
	res, err = m.computeResults(ctx, r, t)
	if err != nil {
		return res, err
	}
	m.resultsMu.Lock()
	if len(m.results) >= maxCachedResults {
		clear(m.results)
	}
	m.results[key] = res
	m.resultsMu.Unlock()
	return res, nil
}

// maxCachedResults bounds the results cache; a full cache starts afresh.
const maxCachedResults = 64

func (m *Manager) computeResults(ctx context.Context, r cascade.Run, t cascade.Trace) (Results, error) {
	stored, err := m.cfg.Store.RunKernels(ctx, r.ID)
	if err != nil {
		return Results{}, err
	}
	clock := 0.0
	if cfgs, err := m.SimConfigs(); err == nil {
		if c, ok := simconfig.Find(cfgs, r.SimConfig); ok {
			clock = c.CoreClockMHz
		}
	}
	results := make([]simlog.KernelResult, len(stored))
	for i, k := range stored {
		results[i] = simlog.KernelResult{
			LaunchUID: k.LaunchUID, Name: k.Name, TraceFile: k.TraceFile,
			KernelOK: k.KernelID != nil, Cycles: k.SimCycles, Instructions: k.SimInstructions,
			IPC: k.IPC, Truncated: k.Truncated,
		}
		if k.KernelID != nil {
			results[i].Kernel = kernellist.Ref{ID: *k.KernelID, Context: cascade.Deref(k.Context)}
		}
	}
	sim := SimTimes(results, clock)
	var res Results
	dir := m.traceDir(r.TraceID)
	if t.HasRealTiming {
		if path, err := tracedir.RealTimingPath(dir); err != nil {
			res.Problems = append(res.Problems, err.Error())
		} else if rt, err := tracedir.ReadRealTiming(path); err != nil {
			res.Problems = append(res.Problems, err.Error())
		} else {
			for _, b := range rt.Bad {
				res.Problems = append(res.Problems, filepath.Base(path)+": "+b.String())
			}
			if c, ok := Compare(sim, rt.Rows); ok {
				res.Comparison = &c
			}
		}
	}
	if t.HasStepTimeline {
		res.Steps, res.Problems = m.steps(dir, sim, res.Problems)
	}
	for _, k := range results {
		row := KernelRow{Name: k.Name, Truncated: k.Truncated}
		if k.LaunchUID > 0 {
			row.LaunchUID = cascade.Ptr(k.LaunchUID)
		}
		if k.KernelOK {
			row.KernelID = k.Kernel.ID
			if k.Kernel.Context != "" {
				row.Context = cascade.Ptr(k.Kernel.Context)
			}
		}
		row.SimCycles, row.SimInstructions, row.IPC = cascade.Ptr(k.Cycles), cascade.Ptr(k.Instructions), cascade.Ptr(k.IPC)
		if ns, ok := k.SimTimeNs(clock); ok {
			row.SimTimeNs = &ns
		}
		if res.Comparison != nil && k.KernelOK {
			if kc, ok := res.Comparison.Kernel(k.Kernel); ok && !k.Truncated {
				row.MeasuredNs, row.ErrorPct = cascade.Ptr(kc.MeasuredNs), cascade.Ptr(kc.ErrorPct)
			}
		}
		res.Kernels = append(res.Kernels, row)
	}
	if res.Steps == nil {
		res.Steps = []StepProjection{}
	}
	return res, nil
}

func (m *Manager) steps(dir string, sim []SimTime, problems []string) ([]StepProjection, []string) {
	tl, err := tracedir.ReadTimeline(filepath.Join(dir, tracedir.TimelineFile))
	if err != nil {
		return nil, append(problems, err.Error())
	}
	km, err := tracedir.ReadKernelMapping(filepath.Join(dir, tracedir.KernelMappingFile))
	if err != nil {
		return nil, append(problems, err.Error())
	}
	for _, b := range tl.Bad {
		problems = append(problems, tracedir.TimelineFile+": "+b.String())
	}
	for _, b := range km.Bad {
		problems = append(problems, tracedir.KernelMappingFile+": "+b.String())
	}
	steps, bad := ProjectSteps(tl, km.Entries, sim)
	for _, b := range bad {
		problems = append(problems, b.String())
	}
	return steps, problems
}
