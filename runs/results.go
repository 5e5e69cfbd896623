package runs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/tracedir"
)

// Results is what a run's kernels say, joined with the trace's measured
// timing and step timeline.
type Results struct {
	Kernels    []cascade.RunKernel    // with their simulated and measured times
	Comparison *cascade.RunComparison // nil when the trace has no usable real timing
	Steps      []cascade.StepProjection
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
	kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
	if err != nil {
		return Results{}, err
	}
	var cfg cascade.SimConfig // a config that is gone has no clock
	if cfgs, err := m.SimConfigs(); err == nil {
		cfg, _ = simconfig.Find(cfgs, r.SimConfig)
	}
	for i, k := range kernels {
		if ns, ok := cfg.SimTimeNs(k.SimCycles); ok {
			kernels[i].SimTimeNs = &ns
		}
	}
	res := Results{Kernels: kernels}
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
			if c, ok := Compare(kernels, rt.Rows); ok {
				res.Comparison = &c
			}
		}
	}
	if t.HasStepTimeline {
		res.Steps, res.Problems = m.steps(dir, kernels, res.Problems)
	}
	if res.Steps == nil {
		res.Steps = []cascade.StepProjection{}
	}
	return res, nil
}

func (m *Manager) steps(dir string, kernels []cascade.RunKernel, problems []string) ([]cascade.StepProjection, []string) {
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
	steps, bad := ProjectSteps(tl, km.Entries, kernels)
	for _, b := range bad {
		problems = append(problems, b.String())
	}
	return steps, problems
}
