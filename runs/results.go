package runs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

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
	if res, ok := m.results.get(key); ok {
		return res, nil
	}
	res, err := m.computeResults(ctx, r, t)
	if err != nil {
		return res, err
	}
	m.results.put(key, res)
	return res, nil
}

// maxCachedResults bounds the results cache; a full cache starts afresh.
const maxCachedResults = 64

func (m *Manager) computeResults(ctx context.Context, r cascade.Run, t cascade.Trace) (Results, error) {
	kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
	if err != nil {
		return Results{}, err
	}
	return m.timing(t).results(kernels, m.runConfig(r)), nil
}

// runConfig is the config a run was launched with; a config that is
// gone has no clock.
func (m *Manager) runConfig(r cascade.Run) cascade.SimConfig {
	var cfg cascade.SimConfig
	if cfgs, err := m.SimConfigs(); err == nil {
		cfg, _ = simconfig.Find(cfgs, r.SimConfig)
	}
	return cfg
}

// traceTiming is what a trace's timing files say, read once for all the
// runs of the trace whose results are computed (a sweep's comparison).
type traceTiming struct {
	rows     []tracedir.TimingRow // nil without usable real timing
	timeline *tracedir.Timeline   // nil without a usable step timeline
	mapping  tracedir.KernelMapping
	problems []string
}

// timing reads a trace's real timing and step timeline, as far as they
// are usable; what is wrong with them is in problems.
func (m *Manager) timing(t cascade.Trace) traceTiming {
	var tt traceTiming
	dir := m.traceDir(t.ID)
	if t.HasRealTiming {
		if path, err := tracedir.RealTimingPath(dir); err != nil {
			tt.problems = append(tt.problems, err.Error())
		} else if rt, err := tracedir.ReadRealTiming(path); err != nil {
			tt.problems = append(tt.problems, err.Error())
		} else {
			for _, b := range rt.Bad {
				tt.problems = append(tt.problems, filepath.Base(path)+": "+b.String())
			}
			tt.rows = rt.Rows
			if tt.rows == nil {
				tt.rows = []tracedir.TimingRow{}
			}
		}
	}
	if t.HasStepTimeline {
		tl, err := tracedir.ReadTimeline(filepath.Join(dir, tracedir.TimelineFile))
		if err != nil {
			tt.problems = append(tt.problems, err.Error())
			return tt
		}
		km, err := tracedir.ReadKernelMapping(filepath.Join(dir, tracedir.KernelMappingFile))
		if err != nil {
			tt.problems = append(tt.problems, err.Error())
			return tt
		}
		for _, b := range tl.Bad {
			tt.problems = append(tt.problems, tracedir.TimelineFile+": "+b.String())
		}
		for _, b := range km.Bad {
			tt.problems = append(tt.problems, tracedir.KernelMappingFile+": "+b.String())
		}
		tt.timeline, tt.mapping = &tl, km
	}
	return tt
}

// results joins a run's kernels, under its config, with the timing.
func (tt traceTiming) results(kernels []cascade.RunKernel, cfg cascade.SimConfig) Results {
	for i, k := range kernels {
		if ns, ok := cfg.SimTimeNs(k.SimCycles); ok {
			kernels[i].SimTimeNs = &ns
		}
	}
	res := Results{Kernels: kernels, Problems: slices.Clone(tt.problems)}
	if tt.rows != nil {
		if c, ok := Compare(kernels, tt.rows); ok {
			res.Comparison = &c
		}
	}
	if tt.timeline != nil {
		steps, bad := ProjectSteps(*tt.timeline, tt.mapping.Entries, kernels)
		for _, b := range bad {
			res.Problems = append(res.Problems, b.String())
		}
		res.Steps = steps
	}
	if res.Steps == nil {
		res.Steps = []cascade.StepProjection{}
	}
	return res
}
