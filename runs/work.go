package runs

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// start is the queue's work: it prepares a queued run's job and hands it
// to the executor's Start, under the server's context (ctx, the queue's,
// ends also when the run is cancelled; what that does to a started job is
// the executor's, through Cancel). A run that is no longer queued, or has
// a job already, is skipped.
func (m *Manager) start(_ context.Context, id string) {
	ctx := m.ctx
	// The worker is known from before the executor is handed the job:
	// RemoveTrace waits for it.
	a, untrack := m.track(id)
	defer untrack()

	r, err := m.cfg.Store.Run(ctx, id)
	if err != nil {
		if ctx.Err() == nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			m.log.Error("load run to start", "run", id, "err", err)
		}
		return
	}
	if ax, ok := m.exec.(ArrayExecutor); ok && r.Coordinated() && !r.State.Final() {
		m.startArray(ctx, ax, r) // its segments, queued under its id
		return
	}
	if r.State != cascade.RunQueued || r.HasJob() || r.Coordinated() {
		return // cancelled while it waited, or started already; a sampled run is never simulated itself
	}
	job, ok := m.prepared(ctx, r, a)
	if !ok {
		return
	}
	job.PeakRSS = m.peakRSS(ctx, r)
	m.exec.Start(ctx, job)
}

// prepared prepares queued run r's job and records its start (the run as
// stored then is the job's); a run whose preparation fails is failed
// unless its trace is being removed (a, the run's worker). ok is false
// when there is no job to start.
func (m *Manager) prepared(ctx context.Context, r cascade.Run, a *active) (job Job, ok bool) {
	job, note, err := m.prepare(ctx, r)
	if err != nil {
		if !a.removed.Load() {
			m.finish(ctx, r.ID, preparedEnd(err))
		}
		return Job{}, false
	}
	job.Run = m.recordStart(ctx, job, note)
	return job, true
}

// peakRSS is the most memory recent simulations of the run's config took,
// those of its trace first (see [Job.PeakRSS]); 0 when none recorded it or
// the store does not answer.
func (m *Manager) peakRSS(ctx context.Context, r cascade.Run) int64 {
	for _, trace := range []string{r.TraceID, ""} {
		peak, err := m.cfg.Store.PeakRSS(ctx, r.SimConfig, trace, RecentRuns)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("read the peak memory of recent runs", "run", r.ID, "config", r.SimConfig, "err", err)
			}
			return 0
		}
		if peak > 0 {
			return peak
		}
	}
	return 0
}

// traceLink names the link to the trace's traces folder in a run's
// directory.
const traceLink = "trace"

// prepare makes the run's directory, with its kernel list (a subset's, or
// its trace's; a segment's with its warming kernel first, see
// segmentWarmer) and its config's files linked, and returns its job and
// what to record in its history ("" for nothing).
func (m *Manager) prepare(ctx context.Context, r cascade.Run) (Job, string, error) {
	dir := m.runDir(r.ID)
	if err := os.RemoveAll(dir); err != nil {
		return Job{}, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Job{}, "", err
	}
	cfg, err := m.configs.runConfig(r)
	if err != nil {
		return Job{}, "", errors.New(cascade.ErrorMessage(err))
	}
	// The trace's folder, linked into the run's directory: the simulator
	// is given it by a path of the run's own (Job.TraceArg).
	traces := filepath.Join(dir, traceLink)
	target, err := filepath.Abs(filepath.Join(m.traceDir(r.TraceID), filepath.FromSlash(tracedir.TracesDir)))
	if err != nil {
		return Job{}, "", err
	}
	if err := os.Symlink(target, traces); err != nil {
		return Job{}, "", err
	}
	list, err := kernellist.Read(filepath.Join(traces, path.Base(tracedir.KernelsListG)))
	if err != nil {
		return Job{}, "", err
	}
	total, note := len(list.Kernels()), ""
	if len(r.KernelIDs) == 0 {
		if err := list.CheckFiles(); err != nil {
			return Job{}, "", missingFix(err, r.TraceID)
		}
	}
	if len(r.KernelIDs) > 0 {
		refs := make([]kernellist.Ref, len(r.KernelIDs))
		for i, id := range r.KernelIDs {
			refs[i] = kernellist.Ref{ID: id}
			if r.KernelContexts != nil {
				refs[i].Context = r.KernelContexts[i]
			}
		}
		src := list
		if list, err = kernellist.WriteSubset(src, dir, refs); err != nil {
			return Job{}, "", missingFix(err, r.TraceID)
		}
		total = len(list.Kernels())
		var prep segmentPrep // a segment with no parent to say: warmed as a split run's
		if r.SampledByID != nil {
			if parent, err := m.cfg.Store.Run(ctx, *r.SampledByID); err == nil {
				prep = segmentPrepOf(parent, r.ID)
			}
		}
		list, note = m.warm.warm(r, cfg, src, list, refs, prep)
	}
	if err := linkConfigFolders(dir, cfg, filepath.Base(m.logs.LogPath(r.ID))); err != nil {
		return Job{}, "", err
	}
	return Job{Run: r, Dir: dir, KernelList: list.Path, Config: cfg, Log: m.logs.LogPath(r.ID), Total: total}, note, nil
}

// recordStart records on the job's run, still queued, what it is about to
// be simulated with: its config's core clock and the sums of the
// simulator, the config files and the trace (see [cascade.RunFigures]).
// A note (what prepare did: the L2 warmed) goes into its history. It
// returns the run as stored, or the job's when that failed.
func (m *Manager) recordStart(ctx context.Context, job Job, note string) cascade.Run {
	sums := m.sums(job.Run.TraceID, job.Config)
	if job.Run.SampledByID != nil && len(job.Run.KernelIDs) > 0 {
		sums = sums.segment(m.lacking(ctx, job.Run.TraceID))
	}
	r, saved, err := m.cfg.Store.UpdateRun(ctx, job.Run.ID, func(r *cascade.Run) error {
		if r.State != cascade.RunQueued || r.HasJob() {
			return cascade.ErrUnchanged
		}
		r.Figures.CoreClockMHz = job.Config.CoreClockMHz
		sums.record(r)
		if note != "" {
			r.History = append(r.History, Stamp(note))
		}
		return nil
	})
	if err != nil || !saved {
		return job.Run
	}
	m.publish(r)
	return r
}

// kernelTotal is how many kernels the run simulates: its subset's, or its
// trace's kernel list's; 0 when the list cannot be read.
func (m *Manager) kernelTotal(ctx context.Context, id string) int {
	r, err := m.cfg.Store.Run(ctx, id)
	if err != nil {
		return 0
	}
	if len(r.KernelIDs) > 0 {
		return len(r.KernelIDs)
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(r.TraceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return 0
	}
	return len(list.Kernels())
}
