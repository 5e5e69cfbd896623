package runs

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/tracedir"
)

// LaunchInput is what a user asks to simulate.
type LaunchInput struct {
	TraceID   string
	SimConfig string
	KernelIDs []int // nil for every kernel
	Label     string
	// Rerun simulates even when a succeeded run did the same simulation
	// already; without it such a launch reuses that run's results (see
	// [Manager.Launch]).
	Rerun bool
	// Sampling, when set, launches a sampled run (see SamplingInput);
	// KernelIDs must then be nil.
	Sampling *SamplingInput
}

// Launch creates a queued run and queues it for the executor. It returns
// NOT_FOUND for an unknown trace, CONFLICT for one that is not ready, and
// BAD_USER_INPUT for the sample trace, an unknown config (naming the ones
// meant, see [simconfig.Unknown]) or an unusable one, or
// kernel ids the trace does not have. A config of another architecture
// than the trace's is fine: the run simulates the trace on that
// architecture (see [Manager.CrossArchitecture]).
//
// Without in.Rerun, a launch whose simulation a succeeded run did already
// (the same trace, config and simulator sums and kernel set: see
// [cascade.RunFigures]) simulates nothing: the run it creates is
// SUCCEEDED at once, its SameAsID that run, its kernel results and figures
// copies of that run's.
func (m *Manager) Launch(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	if in.Sampling != nil {
		return m.launchSampled(ctx, in)
	}
	r, err := m.newRun(ctx, in, nil)
	if err != nil {
		return cascade.Run{}, err
	}
	if r.SameAsID != nil {
		// The kernels first: the run is never seen SUCCEEDED without them.
		if err := m.copyKernels(ctx, []cascade.Run{r}); err != nil {
			return cascade.Run{}, err
		}
	}
	if err := m.cfg.Store.CreateRun(ctx, &r); err != nil {
		return cascade.Run{}, err
	}
	m.publish(r)
	if r.SameAsID != nil {
		m.log.Info("run reused", "run", r.ID, "same_as", *r.SameAsID, "trace", r.TraceID, "config", r.SimConfig)
		return r, nil
	}
	m.log.Info("run queued", "run", r.ID, "trace", r.TraceID, "config", r.SimConfig)
	m.Enqueue(r.ID)
	return r, nil
}

// NewRun checks a launch request as Launch does and returns the queued run
// it would create, not stored; it never reuses a run, whatever in.Rerun.
// With [Manager.Enqueue] it lets a caller store many runs at once (in one
// transaction) and then queue them.
func (m *Manager) NewRun(ctx context.Context, in LaunchInput) (cascade.Run, error) {
	in.Rerun = true
	return m.newRun(ctx, in, nil)
}

// newRun is NewRun, but without in.Rerun the run it returns reuses a
// succeeded run that did its simulation, if there is one (see reuse);
// c, when not nil, keeps what it read for the next call.
func (m *Manager) newRun(ctx context.Context, in LaunchInput, c *reuseCache) (cascade.Run, error) {
	t, err := m.cfg.Store.Trace(ctx, in.TraceID)
	if err != nil {
		return cascade.Run{}, err
	}
	switch {
	case t.Sample:
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: %q is the sample trace, which has no instruction traces; upload a real trace to simulate", t.ID)
	case t.State != cascade.TraceReady:
		return cascade.Run{}, cascade.Errorf(cascade.ECONFLICT, "traceId: trace %q is %s; runs launch on ready traces", t.ID, strings.ToLower(string(t.State)))
	}
	cfg, err := m.config(in.SimConfig)
	if err != nil {
		return cascade.Run{}, err
	}
	if err := m.exec.CheckConfig(cfg); err != nil {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "simConfig: %s: %v", in.SimConfig, err)
	}
	if why := m.NotSimulatable(t); why != "" {
		return cascade.Run{}, cascade.Errorf(cascade.EINVALID, "traceId: %s", why)
	}
	var ids []int
	if in.KernelIDs != nil {
		if ids, err = m.checkKernels(t.ID, in.KernelIDs); err != nil {
			return cascade.Run{}, err
		}
	}
	r := cascade.Run{
		ID: newRunID(), TraceID: t.ID, SimConfig: in.SimConfig, KernelIDs: ids,
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
		orig, err := m.reusable(ctx, r, cfg, c)
		if err != nil {
			return cascade.Run{}, err
		}
		if orig != nil {
			reuse(&r, *orig)
		}
	}
	return r, nil
}

// Enqueue hands stored, queued runs to the executor, in the order given
// after any queued before: each is prepared and started as its turn comes
// (see [Executor.Start]). A run already queued keeps its place; one that
// is no longer queued when its turn comes is skipped.
func (m *Manager) Enqueue(ids ...string) {
	for _, id := range ids {
		m.queue.Add(id)
	}
}

// config finds a usable config.
func (m *Manager) config(name string) (cascade.SimConfig, error) {
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, err
	}
	c, ok := simconfig.Find(cfgs, name)
	switch {
	case !ok:
		return c, cascade.Errorf(cascade.EINVALID, "simConfig: %s", simconfig.Unknown(cfgs, name))
	case !c.Usable():
		return c, cascade.Errorf(cascade.EINVALID, "simConfig: %s cannot be used: %s", name, c.Err)
	}
	return c, nil
}

// CrossArchitecture reports whether the run simulates its trace on another
// architecture than the trace was taken on; false when its config is gone.
func (m *Manager) CrossArchitecture(ctx context.Context, r cascade.Run) (bool, error) {
	t, err := m.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return false, err
	}
	cfgs, err := m.SimConfigs()
	if err != nil {
		return false, err
	}
	c, ok := simconfig.Find(cfgs, r.SimConfig)
	return ok && simconfig.CrossArchitecture(c, t.TraceGPUArch), nil
}

// checkKernels returns the distinct, sorted kernel ids, all of which the
// trace's kernelslist.g must hold.
func (m *Manager) checkKernels(traceID string, ids []int) ([]int, error) {
	if len(ids) == 0 {
		return nil, cascade.Errorf(cascade.EINVALID, "kernelIds: empty; leave it out to simulate every kernel")
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(traceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return nil, fmt.Errorf("read kernel list: %w", err)
	}
	have := map[int]bool{}
	for _, c := range list.Kernels() {
		if c.KernelOK {
			have[c.Kernel.ID] = true
		}
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if !have[id] {
			return nil, cascade.Errorf(cascade.EINVALID, "kernelIds: %d is not a kernel of trace %q", id, traceID)
		}
	}
	return ids, nil
}

var runIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newRunID returns a short id that sorts by creation time.
func newRunID() string {
	b := make([]byte, 10)
	ts := uint64(time.Now().UnixMilli())
	for i := range 5 {
		b[i] = byte(ts >> (8 * (4 - i)))
	}
	rand.Read(b[5:])
	return "r" + runIDEncoding.EncodeToString(b)
}
