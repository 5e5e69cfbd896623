package results

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
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
func (m *Reader) Read(ctx context.Context, r cascade.Run) (Results, error) {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return Results{}, err
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano(), "@", t.UpdatedAt.UnixNano())
	res, ok := m.results.Get(key)
	if !ok {
		if res, err = m.computeResults(ctx, r, t); err != nil {
			return res, err
		}
		m.results.Put(key, res)
	}
	if r.Sampling != nil && r.State == cascade.RunSucceeded {
		// Against the full run of its check, which may be newer.
		res.Kernels = slices.Clone(res.Kernels)
		err = m.joinFull(ctx, r, res.Kernels)
	}
	return res, err
}

// maxCachedResults bounds the results cache; a full cache starts afresh.
const maxCachedResults = 64

func (m *Reader) computeResults(ctx context.Context, r cascade.Run, t cascade.Trace) (Results, error) {
	kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
	if err != nil {
		return Results{}, err
	}
	cfg, problem := m.runConfig(r)
	res := m.timing(ctx, t).results(kernels, cfg)
	if problem != "" {
		res.Problems = append([]string{problem}, res.Problems...)
	}
	return res, nil
}

// runConfig is what a run's results need of its config: the core clock
// recorded when it ran (Figures.CoreClockMHz). A run from before the
// clock was recorded falls back to its config as it is now, by name; when
// that is gone too, there is no clock, and problem says why its kernels
// have no simulated times.
func (m *Reader) runConfig(r cascade.Run) (cascade.SimConfig, string) {
	if r.Figures.CoreClockMHz > 0 {
		return recordedConfig(nil, nil, "", r)
	}
	cfgs, err := m.cfg.Configs.SimConfigs()
	return recordedConfig(cfgs, err, m.cfg.Configs.Gone(), r)
}

// recordedConfig is [Reader.runConfig] with the current configs cfgs
// (or the error reading them) given, and gone, how a config that left
// them is said to be gone (see [Configs]).
func recordedConfig(cfgs []cascade.SimConfig, err error, gone string, r cascade.Run) (cfg cascade.SimConfig, problem string) {
	cfg.Name = r.SimConfig
	if r.Figures.CoreClockMHz > 0 {
		cfg.CoreClockMHz = r.Figures.CoreClockMHz
		return cfg, ""
	}
	if err != nil {
		return cfg, fmt.Sprintf("no simulated times: the run's core clock was not recorded, and the configs cannot be read: %v", err)
	}
	c, ok := simconfig.Find(cfgs, r.SimConfig)
	switch {
	case !ok:
		return cfg, fmt.Sprintf("no simulated times: the run's core clock was not recorded (it ran before clocks were), and its config %s is %s", r.SimConfig, gone)
	case !(c.CoreClockMHz > 0):
		return c, fmt.Sprintf("no simulated times: the run's core clock was not recorded, and its config %s has no -gpgpu_clock_domains", r.SimConfig)
	}
	return c, ""
}

// traceTiming is what a trace's timing files say, read once for all the
// runs of the trace whose results are computed (a sweep's comparison),
// and kept for the trace's version and its timing files' (timingKey).
type traceTiming struct {
	measured *measuredTimes     // nil without usable measured times
	timeline *tracedir.Timeline // nil without a usable step timeline
	mapping  tracedir.KernelMapping
	kernels  traceKernels // the trace's kernel ids and their contexts
	problems []string
	// durRows and cycRows count the real timing's rows with duration_ns,
	// and with cycles alone: what its measured times are.
	durRows, cycRows int
}

// maxCachedTimings bounds the cache of traces' timing.
const maxCachedTimings = 8

// timing reads a trace's measured kernel times (its real timing, else
// its profiles' durations: see measured.go) and step timeline, as far as
// they are usable; what is wrong with them is in problems. It is kept for
// the trace's version and the size and time of its timing files, so the
// pages of a run's kernels do not read them again.
func (m *Reader) timing(ctx context.Context, t cascade.Trace) traceTiming {
	dir := filepath.Join(m.cfg.BucketDir, t.ID)
	key := fmt.Sprint(t.ID, "@", t.UpdatedAt.UnixNano(), "@", t.HasRealTiming, t.HasStepTimeline)
	for _, name := range []string{m.realTimingName(t), tracedir.TimelineFile, tracedir.KernelMappingFile} {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
			key += fmt.Sprint("@", fi.Size(), ":", fi.ModTime().UnixNano())
		}
	}
	if tt, ok := m.timings.Get(key); ok {
		return *tt
	}
	tt := m.readTiming(ctx, t, dir)
	m.timings.Put(key, &tt)
	return tt
}

func (m *Reader) readTiming(ctx context.Context, t cascade.Trace, dir string) traceTiming {
	var tt traceTiming
	// Errors name the trace's files by their paths in it, not the server's.
	rel := func(err error) string { return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "") }
	if t.HasRealTiming || t.HasStepTimeline {
		tt.kernels = m.traceKernels(ctx, t)
	}
	if t.HasRealTiming {
		name := m.realTimingName(t)
		if path, err := tracedir.RealTimingPath(dir); err != nil {
			tt.problems = append(tt.problems, rel(err))
		} else {
			var b measuredBuilder
			rt, err := tracedir.ScanRealTiming(path, b.add)
			if err != nil {
				tt.problems = append(tt.problems, rel(err))
			} else {
				for _, bad := range rt.Bad {
					tt.problems = append(tt.problems, name+": "+bad.String())
				}
				if n := rt.BadRows - len(rt.Bad); n > 0 {
					tt.problems = append(tt.problems, fmt.Sprintf("%s: and %d more bad rows, skipped", name, n))
				}
				tt.measured = b.index(tt.kernels)
				tt.durRows, tt.cycRows = b.durRows, b.cycRows
				tt.problems = append(tt.problems, b.problems.list(name, rt.Prefix)...)
				if b.durRows+b.cycRows == 0 {
					tt.problems = append(tt.problems, fmt.Sprintf("%s: no row has duration_ns or cycles: no kernel is compared", name))
				}
			}
		}
	}
	if !t.HasRealTiming {
		if rows, err := m.profileTimes(ctx, t); err != nil {
			tt.problems = append(tt.problems, fmt.Sprintf("the profiles' kernel durations not read: %v", err))
		} else if rows != nil {
			var b measuredBuilder
			for _, r := range rows {
				b.add(r)
			}
			tt.measured = b.index(nil)
		}
	}
	if t.HasStepTimeline {
		tl, err := tracedir.ReadTimeline(filepath.Join(dir, tracedir.TimelineFile))
		if err != nil {
			tt.problems = append(tt.problems, rel(err))
			return tt
		}
		km, err := tracedir.ReadKernelMapping(filepath.Join(dir, tracedir.KernelMappingFile))
		if err != nil {
			tt.problems = append(tt.problems, rel(err))
			return tt
		}
		var bad problemList
		for _, b := range tl.Bad {
			bad.add("timeline", b.String())
		}
		tt.problems = append(tt.problems, bad.list(tracedir.TimelineFile)...)
		bad = problemList{}
		for _, b := range km.Bad {
			bad.add("mapping", b.String())
		}
		tt.problems = append(tt.problems, bad.list(tracedir.KernelMappingFile)...)
		tt.timeline, tt.mapping = &tl, km
	}
	return tt
}

// problemKind is a reason without its numbers, which says what kind of
// problem it is: "step : not in the timeline".
func problemKind(reason string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, reason)
}

// traceKernels returns the kernel ids of the trace's kernel list and
// their contexts; nil when it has none (not ready) or it cannot be read.
func (m *Reader) traceKernels(ctx context.Context, t cascade.Trace) traceKernels {
	tk := traceKernels{}
	err := m.eachTraceKernel(ctx, t.ID, func(k cascade.Kernel) {
		c := kernellist.NormalizeContext(cascade.Deref(k.Context))
		if !slices.Contains(tk[k.KernelID], c) {
			tk[k.KernelID] = append(tk[k.KernelID], c)
		}
	})
	if err != nil || len(tk) == 0 {
		return nil
	}
	return tk
}

// results joins a run's kernels, under its config, with the timing.
func (tt traceTiming) results(kernels []cascade.RunKernel, cfg cascade.SimConfig) Results {
	for i, k := range kernels {
		if ns, ok := cfg.SimTimeNs(k.SimCycles); ok {
			kernels[i].SimTimeNs = &ns
		}
	}
	res := Results{Kernels: kernels, Problems: slices.Clone(tt.problems)}
	if tt.measured != nil {
		if c, ok := tt.measured.compare(kernels); ok {
			res.Comparison = &c
		}
	}
	if tt.timeline != nil {
		steps, bad := projectSteps(*tt.timeline, tt.mapping.Entries, kernels, tt.kernels)
		var list problemList
		for _, b := range bad {
			list.add(problemKind(b.Reason), b.String())
		}
		res.Problems = append(res.Problems, list.list(tracedir.KernelMappingFile)...)
		res.Steps = projected(steps)
		if n := len(steps) - len(res.Steps); n > 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("%d of %d steps not projected: none of their events maps to a kernel with a simulated time%s", n, len(steps), noTimesWhy(kernels)))
		}
	}
	if res.Steps == nil {
		res.Steps = []cascade.StepProjection{}
	}
	return res
}

// projected keeps the steps that have a projection: at least one mapped
// event replaced by its kernel's simulated time. Any other step's
// "projection" would be its measured time again, which reads as a perfect
// prediction.
func projected(steps []cascade.StepProjection) []cascade.StepProjection {
	out := make([]cascade.StepProjection, 0, len(steps))
	for _, st := range steps {
		if st.EventsReplaced > 0 {
			out = append(out, st)
		}
	}
	return out
}

// noTimesWhy says, for the steps not projected, when none of a run's
// kernels has a simulated time; "" when some have.
func noTimesWhy(kernels []cascade.RunKernel) string {
	for _, k := range kernels {
		if k.SimTimeNs != nil {
			return ""
		}
	}
	if len(kernels) == 0 {
		return " (the run has no simulated kernels)"
	}
	return " (no kernel of the run has a simulated time)"
}
