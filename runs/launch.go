package runs

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// LaunchInput is what a user asks to simulate.
type LaunchInput struct {
	TraceID string
	// SimConfig names a tested config or a variant of one ("SM7_QV100",
	// "QV100-64SM", "SM7_QV100 -gpgpu_n_clusters 40": see
	// [simconfig.Variant]); Params are overrides given beside the name.
	SimConfig string
	Params    []cascade.SimParam
	KernelIDs []int // nil for every kernel
	// KernelContexts, when set, is the CUDA context of each of KernelIDs,
	// index for index (see [cascade.Run.KernelContexts]); nil selects
	// each id in every context.
	KernelContexts []string
	Label          string
	// Rerun simulates even when a succeeded run did the same simulation
	// already; without it such a launch reuses that run's results (see
	// [Manager.Launch]).
	Rerun bool
	// Coordinator: the run is a sampled or split run's own, which
	// simulates nothing itself (its segments do), so a trace with
	// untraced launches may have one without kernelIds.
	Coordinator bool

	// Segment is set on a segment of a sampled or split run: it is
	// prepared with its L2 warmed (warm.go), so it reuses, and is reused
	// by, only segments so prepared (see [Sums.segment]).
	Segment bool
}

// Launch creates a queued run and queues it for the executor. It returns
// NOT_FOUND for an unknown trace, CONFLICT for one that is not ready, and
// BAD_USER_INPUT for the sample trace, an unknown config (naming the ones
// meant, see [simconfig.Unknown]) or an unusable one, or
// kernel ids the trace does not have. A config of another architecture
// than the trace's is fine: the run simulates the trace on that
// architecture (see [Configs.CrossArchitecture]).
//
// Without in.Rerun, a launch whose simulation a succeeded run did already
// (the same trace, config and simulator sums and kernel set: see
// [cascade.RunFigures]) simulates nothing: the run it creates is
// SUCCEEDED at once, its SameAsID that run, its kernel results and figures
// copies of that run's.
func (m *Manager) Launch(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	rs, err := m.LaunchRuns(ctx, []LaunchInput{in}, nil)
	if err != nil {
		return cascade.Run{}, err
	}
	r := rs[0]
	if r.SameAsID != nil {
		m.log.Info("run reused", "run", r.ID, "same_as", *r.SameAsID, "trace", r.TraceID, "config", r.SimConfig)
	} else {
		m.log.Info("run queued", "run", r.ID, "trace", r.TraceID, "config", r.SimConfig)
	}
	return r, nil
}

// LaunchRuns launches runs together: each request is checked as Launch
// checks it (and reuses a succeeded run's simulation unless in.Rerun),
// shape, when not nil, may change the runs before they are stored (a
// [Coordinator] makes one of them its own and the others its parts: a
// sampled run and its segments), and they are stored in one transaction,
// in order, then published, and those queued that the executor runs are
// queued for it. Nothing is stored when a request is refused or shape
// fails. A trace's runs are never removed while it works (RemoveTrace
// waits for it).
func (m *Manager) LaunchRuns(ctx context.Context, ins []LaunchInput, shape func(rs []cascade.Run) error) ([]cascade.Run, error) {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	rs, err := m.newRuns(ctx, ins, shape)
	if err != nil {
		return nil, err
	}
	// The kernels of reused runs first: a run is never seen SUCCEEDED
	// without them.
	if err := m.copyKernels(ctx, rs); err != nil {
		return nil, err
	}
	if err := m.cfg.Store.CreateRuns(ctx, rs); err != nil {
		return nil, err
	}
	var queue []cascade.Run
	for _, r := range rs {
		m.publish(r)
		if r.State == cascade.RunQueued && !r.Coordinated() {
			queue = append(queue, r)
		}
	}
	m.enqueue(queue...)
	return rs, nil
}

// newRuns checks launch requests and returns the runs they make, shaped
// by shape when it is not nil, not stored.
func (m *Manager) newRuns(ctx context.Context, ins []LaunchInput, shape func(rs []cascade.Run) error) ([]cascade.Run, error) {
	b := &batch{}
	rs := make([]cascade.Run, 0, len(ins))
	for _, in := range ins {
		r, err := m.newRun(ctx, in, b)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	if shape != nil {
		if err := shape(rs); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// batch is what checking a batch of launch requests read, for the next
// request: its traces, configs, kernel lists and reusable runs.
type batch struct {
	reuse   reuseCache
	traces  map[string]cascade.Trace
	configs map[string]cascade.SimConfig
	kernels map[string]map[kernellist.Ref]bool // by trace: its kernel list's, with and without their contexts
	// untraced holds, by trace, its launches and those without a kernel
	// trace, read for a trace with untraced launches (untraced.go).
	untraced map[string]untracedLaunches
	// resolver resolves configs' names, the configs and modifiers read
	// once for the batch.
	resolver resolver
}

// newRun checks a launch request and returns the queued run it makes, not
// stored; without in.Rerun it reuses a succeeded run that did its
// simulation, if there is one (see reuse). b keeps what it read.
func (m *Manager) newRun(ctx context.Context, in LaunchInput, b *batch) (cascade.Run, error) {
	t, ok := b.traces[in.TraceID]
	if !ok {
		var err error
		if t, err = m.cfg.Store.Trace(ctx, in.TraceID); cascade.ErrorCode(err) == cascade.ENOTFOUND {
			return cascade.Run{}, cascade.Errorf(cascade.ENOTFOUND, "traceId: trace %q not found", in.TraceID)
		} else if err != nil {
			return cascade.Run{}, err
		}
		switch {
		case t.Sample:
			return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: %q is the sample trace, which has no instruction traces; upload a real trace to simulate", t.ID)
		case t.State != cascade.TraceReady:
			return cascade.Run{}, cascade.Errorf(cascade.ECONFLICT, "traceId: trace %q %s; runs launch on ready traces", t.ID, t.State.Is())
		}
		if why := m.configs.NotSimulatable(t); why != "" {
			return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: %s", why)
		}
		b.traces = setIn(b.traces, t.ID, t)
	}
	cfgKey := in.SimConfig
	for _, p := range in.Params {
		cfgKey += " " + p.String()
	}
	cfg, ok := b.configs[cfgKey]
	if !ok {
		var err error
		if cfg, err = m.configs.variant(ctx, &b.resolver, in.SimConfig, in.Params); err != nil {
			return cascade.Run{}, err
		}
		if err := m.exec.CheckConfig(cfg); err != nil {
			return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "simConfig: %s: %v", in.SimConfig, err)
		}
		b.configs = setIn(b.configs, cfgKey, cfg)
	}
	if in.KernelIDs == nil && !in.Coordinator && t.UntracedKernels > 0 {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: trace %q has no kernel trace of %d of its %d launches (it was traced with DYNAMIC_KERNEL_LIMIT ranges; Kernel.traced is false for them): "+
			"a run of every kernel needs them all; launch a sampled run of the plan whose traceList it was traced with, or give kernelIds of traced kernels",
			t.ID, t.UntracedKernels, t.KernelCount+t.UntracedKernels)
	}
	var ids []int
	var ctxs []string
	if in.KernelIDs == nil && in.KernelContexts != nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "kernelContexts: give kernelIds with them, one context for each id")
	}
	if in.KernelIDs != nil {
		have, ok := b.kernels[t.ID]
		if !ok {
			var err error
			if have, err = m.kernelIDs(t.ID); err != nil {
				return cascade.Run{}, err
			}
			b.kernels = setIn(b.kernels, t.ID, have)
		}
		var err error
		ids, ctxs, err = checkKernels(t.ID, in.KernelIDs, in.KernelContexts, have)
		// On a trace with untraced launches every context's launch of a
		// named id must be traced (the run simulates each context's; ids
		// repeat across contexts). A segment's ids are its coordinator's
		// to check, by context (sampled.needsUntraced).
		if t.UntracedKernels > 0 && (err != nil || !in.Segment) {
			err = m.untracedKernels(t, in.KernelIDs, b, err)
		}
		if err != nil {
			return cascade.Run{}, err
		}
	}
	r := cascade.Run{
		ID: cascade.NewID(cascade.RunIDPrefix), TraceID: t.ID, SimConfig: cfg.Name, KernelIDs: ids, KernelContexts: ctxs,
		ConfigBase: cfg.Base, ConfigParams: cfg.Params,
		State: cascade.RunQueued, Executor: m.exec.Name(), History: []string{},
		// The clock is recorded now, and again as the run starts (see
		// [Manager.start]): its results never depend on the config's
		// being there later.
		Figures: cascade.RunFigures{CoreClockMHz: cfg.CoreClockMHz},
	}
	if in.Label != "" {
		r.Label = &in.Label
	}
	if !in.Rerun {
		orig, err := m.reusable(ctx, r, cfg, in.Segment, &b.reuse)
		if err != nil {
			return cascade.Run{}, err
		}
		if orig != nil {
			reuse(&r, *orig)
		}
	}
	return r, nil
}

// setIn sets m[k] = v, making m first when it is nil.
func setIn[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}

// kernelIDs returns the kernels of the trace's kernelslist.g, each as
// its id alone and as its id in its context.
func (m *Manager) kernelIDs(traceID string) (map[kernellist.Ref]bool, error) {
	list, err := kernellist.Read(filepath.Join(m.traceDir(traceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return nil, fmt.Errorf("read kernel list: %w", err)
	}
	have := map[kernellist.Ref]bool{}
	for _, c := range list.Kernels() {
		if c.KernelOK {
			have[kernellist.Ref{ID: c.Kernel.ID}] = true
			have[c.Kernel] = true
		}
	}
	return have, nil
}

// checkKernels returns the kernels chosen, sorted by id and context, all
// of which the trace's kernel list, have, must hold: ids, and with ctxs
// (nil, or one context for each id) each in its context. None may be
// given twice.
func checkKernels(traceID string, ids []int, ctxs []string, have map[kernellist.Ref]bool) ([]int, []string, error) {
	if len(ids) == 0 {
		return nil, nil, cascade.Errorf(cascade.EINVALID, "kernelIds: empty; leave it out to simulate every kernel")
	}
	if ctxs != nil && len(ctxs) != len(ids) {
		return nil, nil, cascade.Errorf(cascade.EINVALID, "kernelContexts: %d contexts for %d kernel ids; give one for each id, or none", len(ctxs), len(ids))
	}
	refs := make([]kernellist.Ref, len(ids))
	for i, id := range ids {
		refs[i].ID = id
		if ctxs != nil {
			refs[i].Context = kernellist.NormalizeContext(ctxs[i])
		}
	}
	given := refs
	refs = slices.SortedFunc(slices.Values(refs), func(a, b kernellist.Ref) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), strings.Compare(a.Context, b.Context))
	})
	for i := 1; i < len(refs); i++ {
		if refs[i] == refs[i-1] {
			return nil, nil, givenTwice(given, refs[i])
		}
	}
	ids = make([]int, len(refs))
	if ctxs != nil {
		ctxs = make([]string, len(refs))
	}
	for i, r := range refs {
		if !have[r] {
			return nil, nil, cascade.Errorf(cascade.EINVALID, "kernelIds: %s is not a kernel of trace %q", r, traceID)
		}
		ids[i] = r.ID
		if ctxs != nil {
			ctxs[i] = r.Context
		}
	}
	return ids, ctxs, nil
}

// givenTwice is the refusal of kernel r, given twice among given.
func givenTwice(given []kernellist.Ref, r kernellist.Ref) error {
	first := slices.Index(given, r)
	again := first + 1 + slices.Index(given[first+1:], r)
	return cascade.Errorf(cascade.EINVALID, "kernelIds[%d]: %s is given twice (also kernelIds[%d])", again, r, first)
}
