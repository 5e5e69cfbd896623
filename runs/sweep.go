package runs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/db"
)

// MaxSweepRuns bounds the runs one sweep launches (traces × configs).
const MaxSweepRuns = 10_000

// SweepInput is a sweep a user asks for: every trace under every config.
type SweepInput struct {
	TraceIDs   []string
	SimConfigs []string // config names
	Label      string
}

// LaunchSweep checks a sweep as a whole and, when nothing is wrong with
// it, stores it and its runs (one per trace and config, trace by trace)
// queued in one transaction, then hands them to the executor (the Slurm
// executor submits them after the transaction, a few at a time). When
// anything is wrong nothing is stored, and the BAD_USER_INPUT error names
// every refusal: an empty or too long list, an id or name given twice, a
// trace that is not there, not ready or the sample, a config that is
// unknown or unusable.
func (m *Manager) LaunchSweep(ctx context.Context, in SweepInput) (cascade.Sweep, error) {
	m.launchMu.Lock()
	s, rs, err := m.newSweep(ctx, in)
	if err == nil {
		start := time.Now()
		err = m.cfg.Store.CreateSweep(ctx, &s, rs)
		m.log.Info("sweep queued", "sweep", s.ID, "runs", len(rs), "traces", len(s.TraceIDs), "configs", len(s.SimConfigs), "stored_in", time.Since(start))
	}
	m.launchMu.Unlock()
	if err != nil {
		return cascade.Sweep{}, err
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
		m.publish(r)
	}
	m.Enqueue(ids...)
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
		}
	}
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.Sweep{}, nil, err
	}
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
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
		case !ok && len(cfgs) == 0:
			refuse("simConfigs[%d]: no config %q: no configs are set up (CASCADE_SIM_CONFIGS_DIR)", i, name)
		case !ok:
			refuse("simConfigs[%d]: no config %q (have %s)", i, name, strings.Join(names, ", "))
		case !c.Usable():
			refuse("simConfigs[%d]: %s cannot be used: %s", i, name, c.Err)
		case m.slurm != nil:
			if _, err := ConfigSlurmOptions(c); err != nil {
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
		ID: "s" + newRunID()[1:], TraceIDs: in.TraceIDs, SimConfigs: in.SimConfigs, Executor: m.cfg.Executor.Name(),
	}
	if in.Label != "" {
		s.Label = &in.Label
	}
	rs := make([]cascade.Run, 0, len(in.TraceIDs)*len(in.SimConfigs))
	for _, t := range in.TraceIDs {
		for _, c := range in.SimConfigs {
			rs = append(rs, cascade.Run{
				ID: newRunID(), TraceID: t, SimConfig: c, Label: s.Label,
				State: cascade.RunQueued, Executor: s.Executor, History: []string{},
			})
		}
	}
	return s, rs, nil
}

// CancelSweep cancels every run of a sweep that is not over: the queued
// ones not yet given to Slurm in one transaction, the others one by one as
// [Manager.Cancel] does (a running one ends once its simulator or job is
// gone). It returns NOT_FOUND for an unknown sweep; a sweep whose runs are
// all over is no error.
func (m *Manager) CancelSweep(ctx context.Context, id string) (cascade.Sweep, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return s, err
	}
	queued, err := m.cfg.Store.CancelQueuedSweepRuns(ctx, id, stamp("cancelled with its sweep before it started"))
	if err != nil {
		return s, err
	}
	for _, r := range queued {
		m.queue.Cancel(r.ID)
		if m.slurm != nil {
			m.slurm.mu.Lock()
			delete(m.slurm.held, r.ID)
			delete(m.slurm.maybe, r.ID)
			m.slurm.mu.Unlock()
		}
		m.publish(r)
	}
	rest, err := m.cfg.Store.SweepRuns(ctx, id, cascade.RunQueued, cascade.RunRunning)
	if err != nil {
		return s, err
	}
	var errs []error
	for _, r := range rest {
		if _, err := m.Cancel(ctx, r.ID); err != nil && cascade.ErrorCode(err) != cascade.ECONFLICT && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			errs = append(errs, fmt.Errorf("cancel run %s: %w", r.ID, err))
		}
	}
	m.log.Info("sweep cancelled", "sweep", id, "queued", len(queued), "others", len(rest))
	return s, errors.Join(errs...)
}

// Sweep returns the sweep with the given id, or NOT_FOUND.
func (m *Manager) Sweep(ctx context.Context, id string) (cascade.Sweep, error) {
	return m.cfg.Store.Sweep(ctx, id)
}

// Sweeps returns a page of sweeps, newest first.
func (m *Manager) Sweeps(ctx context.Context, p db.Page) (db.PageOf[cascade.Sweep], error) {
	return m.cfg.Store.Sweeps(ctx, p)
}

// SweepProgress counts a sweep's runs by state.
func (m *Manager) SweepProgress(ctx context.Context, id string) (cascade.SweepProgress, error) {
	return m.cfg.Store.SweepProgress(ctx, id)
}

// SweepComparison pools, for each config of a sweep in its order, the
// results of its succeeded runs (see [cascade.SweepConfigComparison]):
// each run's kernels joined with its trace's measured times as for a
// run's own results ([Manager.Results]), every trace's timing files read
// once. It is computed again only when a run of the sweep has succeeded
// since (the last few sweeps' are kept).
func (m *Manager) SweepComparison(ctx context.Context, id string) ([]cascade.SweepConfigComparison, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	rs, err := m.cfg.Store.SweepRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	var latest time.Time
	succeeded := 0
	for _, r := range rs {
		if r.State == cascade.RunSucceeded {
			succeeded++
			if r.UpdatedAt.After(latest) {
				latest = r.UpdatedAt
			}
		}
	}
	key := fmt.Sprint(id, "@", len(rs), "@", succeeded, "@", latest.UnixNano())
	if c, ok := m.sweepComparisons.get(key); ok {
		return c, nil
	}
	c, err := m.compareSweep(ctx, s, rs)
	if err != nil {
		return nil, err
	}
	m.sweepComparisons.put(key, c)
	return c, nil
}

// maxCachedSweeps bounds the sweep comparison cache.
const maxCachedSweeps = 16

// pool gathers one config's compared kernels and steps.
type pool struct {
	c          cascade.SweepConfigComparison
	absErr     float64
	xs, ys     []float64
	stepAbsErr float64
}

func (m *Manager) compareSweep(ctx context.Context, s cascade.Sweep, rs []cascade.Run) ([]cascade.SweepConfigComparison, error) {
	pools := map[string]*pool{}
	order := append([]string(nil), s.SimConfigs...)
	for _, name := range s.SimConfigs {
		pools[name] = &pool{c: cascade.SweepConfigComparison{SimConfig: name}}
	}
	cfgs, err := m.SimConfigs()
	if err != nil {
		return nil, err
	}
	timings := map[string]*traceTiming{}
	for _, r := range rs {
		p := pools[r.SimConfig]
		if p == nil { // not possible: a sweep's runs use its configs
			p = &pool{c: cascade.SweepConfigComparison{SimConfig: r.SimConfig}}
			pools[r.SimConfig] = p
			order = append(order, r.SimConfig)
		}
		p.c.Runs++
		if r.State != cascade.RunSucceeded {
			continue
		}
		p.c.Succeeded++
		tt := timings[r.TraceID]
		if tt == nil {
			t, err := m.cfg.Store.Trace(ctx, r.TraceID)
			if err != nil {
				return nil, err
			}
			v := m.timing(t)
			tt = &v
			timings[r.TraceID] = tt
		}
		if tt.rows == nil && tt.timeline == nil {
			continue
		}
		kernels, err := m.cfg.Store.RunKernels(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		cfg, _ := simconfig.Find(cfgs, r.SimConfig)
		res := tt.results(kernels, cfg)
		if res.Comparison != nil {
			p.c.Compared++
			for _, k := range res.Kernels {
				if k.ErrorPct == nil {
					continue
				}
				p.c.KernelsCompared++
				p.absErr += math.Abs(*k.ErrorPct)
				p.xs, p.ys = append(p.xs, *k.SimTimeNs), append(p.ys, *k.MeasuredNs)
			}
		}
		for _, st := range res.Steps {
			if st.EventsReplaced == 0 || st.MeasuredNs <= 0 {
				continue
			}
			p.c.StepsCompared++
			p.stepAbsErr += 100 * math.Abs(st.ProjectedNs-st.MeasuredNs) / st.MeasuredNs
		}
	}
	out := make([]cascade.SweepConfigComparison, 0, len(order))
	for _, name := range order {
		p := pools[name]
		if n := p.c.KernelsCompared; n > 0 {
			p.c.MAPE = cascade.Ptr(p.absErr / float64(n))
			p.c.Correlation = pearson(p.xs, p.ys)
		}
		if n := p.c.StepsCompared; n > 0 {
			p.c.StepMAPE = cascade.Ptr(p.stepAbsErr / float64(n))
		}
		out = append(out, p.c)
	}
	return out, nil
}
