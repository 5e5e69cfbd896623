package runs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// MaxSweepRuns bounds the runs one sweep launches (traces × configs).
const MaxSweepRuns = 10_000

// SweepInput is a sweep a user asks for: every trace under every config.
type SweepInput struct {
	TraceIDs   []string
	SimConfigs []string // config names
	Label      string
	// Rerun simulates every run; without it a run whose simulation a
	// succeeded run did already reuses that run's results, as
	// [Manager.Launch] does.
	Rerun bool
}

// LaunchSweep checks a sweep as a whole and, when nothing is wrong with
// it, stores it and its runs (one per trace and config, trace by trace)
// queued in one transaction, then queues them for the executor (the Slurm
// executor submits them after the transaction, a few at a time). When
// anything is wrong nothing is stored, and the BAD_USER_INPUT error names
// every refusal: an empty or too long list, an id or name given twice, a
// trace that is not there, not ready or the sample, a config that is
// unknown or unusable, or one the executor cannot start jobs under.
func (m *Manager) LaunchSweep(ctx context.Context, in SweepInput) (cascade.Sweep, error) {
	m.launchMu.Lock()
	s, rs, err := m.newSweep(ctx, in)
	if err == nil {
		// The kernels first: a reused run is never seen SUCCEEDED without them.
		err = m.copyKernels(ctx, rs)
	}
	if err == nil {
		start := time.Now()
		err = m.cfg.Store.CreateSweep(ctx, &s, rs)
		m.log.Info("sweep queued", "sweep", s.ID, "runs", len(rs), "traces", len(s.TraceIDs), "configs", len(s.SimConfigs), "stored_in", time.Since(start))
	}
	m.launchMu.Unlock()
	if err != nil {
		return cascade.Sweep{}, err
	}
	ids := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.SameAsID == nil {
			ids = append(ids, r.ID)
		}
		m.publish(r)
	}
	m.enqueue(ids...)
	return s, nil
}

// newSweep checks a sweep and returns it and its runs, not stored.
func (m *Manager) newSweep(ctx context.Context, in SweepInput) (cascade.Sweep, []cascade.Run, error) {
	var refusals []string
	refuse := func(format string, a ...any) { refusals = append(refusals, fmt.Sprintf(format, a...)) }
	if len(in.TraceIDs) == 0 {
		refuse("traceIds: empty; a sweep needs at least one trace")
	}
	if len(in.SimConfigs) == 0 {
		refuse("simConfigs: empty; a sweep needs at least one config")
	}
	if n := len(in.TraceIDs) * len(in.SimConfigs); n > MaxSweepRuns {
		refuse("too many runs: %d traces × %d configs = %d; a sweep launches at most %d", len(in.TraceIDs), len(in.SimConfigs), n, MaxSweepRuns)
	}
	seen := map[string]int{}
	for i, id := range in.TraceIDs {
		if j, ok := seen[id]; ok {
			refuse("traceIds[%d]: %q is given twice (also traceIds[%d])", i, id, j)
			continue
		}
		seen[id] = i
		t, err := m.cfg.Store.Trace(ctx, id)
		switch {
		case cascade.ErrorCode(err) == cascade.ENOTFOUND:
			refuse("traceIds[%d]: trace %q not found", i, id)
		case err != nil:
			return cascade.Sweep{}, nil, err
		case t.Sample:
			refuse("traceIds[%d]: %q is the sample trace, which has no instruction traces", i, id)
		case t.State != cascade.TraceReady:
			refuse("traceIds[%d]: trace %q is %s; runs launch on ready traces", i, id, strings.ToLower(string(t.State)))
		case m.configs.NotSimulatable(t) != "":
			refuse("traceIds[%d]: %s", i, m.configs.NotSimulatable(t))
		}
	}
	cfgs, err := m.configs.SimConfigs()
	if err != nil {
		return cascade.Sweep{}, nil, err
	}
	seen = map[string]int{}
	for i, name := range in.SimConfigs {
		if j, ok := seen[name]; ok {
			refuse("simConfigs[%d]: %q is given twice (also simConfigs[%d])", i, name, j)
			continue
		}
		seen[name] = i
		c, ok := simconfig.Find(cfgs, name)
		switch {
		case !ok:
			refuse("simConfigs[%d]: %s", i, simconfig.Unknown(cfgs, name))
		case !c.Usable():
			refuse("simConfigs[%d]: %s cannot be used: %s", i, name, c.Err)
		default:
			if err := m.exec.CheckConfig(c); err != nil {
				refuse("simConfigs[%d]: %s: %v", i, name, err)
			}
		}
	}
	if len(refusals) > 0 {
		noun := "problem"
		if len(refusals) > 1 {
			noun = "problems"
		}
		return cascade.Sweep{}, nil, cascade.Errorf(cascade.EINVALID, "sweep refused, nothing queued (%d %s): %s", len(refusals), noun, strings.Join(refusals, "; "))
	}
	s := cascade.Sweep{
		ID: cascade.NewID(cascade.SweepIDPrefix), TraceIDs: in.TraceIDs, SimConfigs: in.SimConfigs, Executor: m.exec.Name(),
	}
	if in.Label != "" {
		s.Label = &in.Label
	}
	rs := make([]cascade.Run, 0, len(in.TraceIDs)*len(in.SimConfigs))
	var reused reuseCache
	for _, t := range in.TraceIDs {
		for _, c := range in.SimConfigs {
			r := cascade.Run{
				ID: cascade.NewID(cascade.RunIDPrefix), TraceID: t, SimConfig: c, Label: s.Label,
				State: cascade.RunQueued, Executor: s.Executor, History: []string{},
			}
			if !in.Rerun {
				cfg, _ := simconfig.Find(cfgs, c)
				orig, err := m.reusable(ctx, r, cfg, &reused)
				if err != nil {
					return cascade.Sweep{}, nil, err
				}
				if orig != nil {
					reuse(&r, *orig)
				}
			}
			rs = append(rs, r)
		}
	}
	return s, rs, nil
}
