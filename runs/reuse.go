package runs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cascade-sim/cascade"
)

// reusable returns the succeeded run whose simulation r, about to be
// launched under cfg, would repeat: a run of the same trace with the same
// kernel set whose recorded sums (see [cascade.RunFigures]) equal those
// of what r would use now, every one of them known. The latest such run
// wins; runs that were themselves reused are passed over for theirs.
// The sums are computed only when the trace has a candidate. It returns
// nil for none. A segment of a sampled or split run (segment) compares
// the sums its preparation records (see [Sums.segment]). c, when not nil,
// keeps what it read for the next call (a sweep's launch).
func (m *Manager) reusable(ctx context.Context, r cascade.Run, cfg cascade.SimConfig, segment bool, c *reuseCache) (*cascade.Run, error) {
	if c == nil {
		c = &reuseCache{}
	}
	if c.runs == nil {
		c.runs, c.sums, c.lacking = map[string][]cascade.Run{}, map[string]Sums{}, map[string]bool{}
	}
	rs, ok := c.runs[r.TraceID]
	if !ok {
		all, err := m.cfg.Store.TraceRuns(ctx, r.TraceID)
		if err != nil {
			return nil, err
		}
		for _, o := range all {
			if o.State == cascade.RunSucceeded && o.SameAsID == nil && !o.Coordinated() && sumsOf(o).complete() {
				rs = append(rs, o)
			}
		}
		c.runs[r.TraceID] = rs
	}
	var cands []cascade.Run
	for _, o := range rs {
		if slices.Equal(o.KernelIDs, r.KernelIDs) && slices.Equal(o.KernelContexts, r.KernelContexts) {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	key := r.TraceID + "\x00" + cfg.Name
	sums, ok := c.sums[key]
	if !ok {
		sums = m.sums(r.TraceID, cfg)
		c.sums[key] = sums
	}
	if !sums.complete() {
		return nil, nil
	}
	if segment {
		lacking, ok := c.lacking[r.TraceID]
		if !ok {
			lacking = m.lacking(ctx, r.TraceID)
			c.lacking[r.TraceID] = lacking
		}
		sums = sums.segment(lacking)
	}
	for i := len(cands) - 1; i >= 0; i-- { // stored in launch order
		if sumsOf(cands[i]) == sums {
			return &cands[i], nil
		}
	}
	return nil, nil
}

// reuseCache is what [Manager.reusable] read: the succeeded runs with sums
// of each trace, and the sums of each trace and config.
type reuseCache struct {
	runs    map[string][]cascade.Run
	sums    map[string]Sums
	lacking map[string]bool // whether each trace lacks launches' kernel traces
}

// reuse makes the new run r, not stored, a copy of the succeeded run orig
// instead of a simulation: SUCCEEDED at once, SameAsID orig, with orig's
// progress, statistics counters and figures (the cost is orig's
// simulation's). Its kernels are copied by [Manager.copyKernels].
func reuse(r *cascade.Run, orig cascade.Run) {
	now := time.Now().UTC()
	r.State, r.SameAsID = cascade.RunSucceeded, &orig.ID
	r.StartedAt, r.FinishedAt = &now, &now
	r.KernelsDone, r.KernelsTotal = orig.KernelsDone, orig.KernelsTotal
	r.StatCounters, r.Figures = orig.StatCounters, orig.Figures
	r.History = append(r.History, Stamp(fmt.Sprintf(
		"not simulated: run %s succeeded with the same trace, config files, simulator and kernels, and its results are copied (launch with rerun to simulate again)", orig.ID)))
}

// copyKernels stores, as the kernel results of each reused run of rs, a
// copy of those of the run it is the same as, made in the store: a run of
// a million kernels is never read into memory.
func (m *Manager) copyKernels(ctx context.Context, rs []cascade.Run) error {
	for _, r := range rs {
		if r.SameAsID == nil {
			continue
		}
		if err := m.cfg.Store.CopyRunKernels(ctx, *r.SameAsID, r.ID); err != nil {
			return err
		}
	}
	return nil
}
