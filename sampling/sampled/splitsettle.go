package sampled

import (
	"context"
	"fmt"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/runs"
)

// A split run follows its segments as a sampled run does (settle.go): it
// is RUNNING once one of them started, counts the launches of those that
// succeeded, is stitched and SUCCEEDED once all have, and FAILED (or
// CANCELLED) as soon as one is, the others then cancelled.

// stitchChunk is the kernels of a split run stored at once.
var stitchChunk = 1 << 16

// settleSplit brings split run p, not over, up to date with its segments;
// under c.mu.
func (c *Coordinator) settleSplit(ctx context.Context, p cascade.Run) error {
	sp := p.Split
	done := 0
	return c.settleSegments(ctx, p, sp.SegmentIDs,
		func(i int, _ cascade.Run) { done += sp.SegmentEnd(i) - sp.SegmentStarts[i] },
		"stitching", func(segs []cascade.Run) error { return c.stitch(ctx, p, segs) },
		func(r *cascade.Run) (changed, ok bool) {
			if r.Split == nil {
				return false, false
			}
			if r.KernelsDone != done {
				r.KernelsDone, changed = done, true
			}
			return changed, true
		})
}

// stitch records the end of split run p, all of whose segments segs
// succeeded: each launch's kernel results are those of the segment that
// gives it (its warm-up's are left out), stored in launch order, then its
// figures and SUCCEEDED, in that order, so that it is never seen
// SUCCEEDED without its kernels. Its statistics are its kernels', so its
// totals are summed as a full run's are; its StatCounters are its first
// segment's, and a segment that recorded others has its statistics
// mapped onto them by name (absent where it has none).
func (c *Coordinator) stitch(ctx context.Context, p cascade.Run, segs []cascade.Run) error {
	sp := p.Split
	byID := make(map[string]cascade.Run, len(segs))
	for _, s := range segs {
		byID[s.ID] = s
	}
	ordered := make([]cascade.Run, len(sp.SegmentIDs))
	for i, id := range sp.SegmentIDs {
		s, ok := byID[id]
		if !ok {
			return fmt.Errorf("segment %d of %d (run %s) is gone", i+1, len(sp.SegmentIDs), id)
		}
		ordered[i] = s
	}
	t, err := c.cfg.Store.Trace(ctx, p.TraceID)
	if err != nil {
		return err
	}
	in, err := c.cfg.Plans.Input(ctx, t)
	if err != nil {
		return err
	}
	if len(in.Launches) != sp.Launches {
		return fmt.Errorf("the run was split over %d launches, its trace now has %d", sp.Launches, len(in.Launches))
	}
	counters := ordered[0].StatCounters
	table, err := runs.StatTable(cascade.Run{ID: p.ID, StatCounters: counters})
	if err != nil {
		return err
	}

	var cycles int64
	var wall float64
	var peak int64
	written := 0
	buf := make([]cascade.RunKernel, 0, min(stitchChunk, sp.Launches))
	for i, s := range ordered {
		ks, err := c.cfg.Store.RunKernels(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("read segment %d's kernels (run %s): %w", i+1, s.ID, err)
		}
		remap, err := statRemap(table, s)
		if err != nil {
			return err
		}
		pos := make(map[launchKey]int, len(ks))
		for j := range ks {
			pos[launchKey{kernellist.NormalizeContext(cascade.Deref(ks[j].Context)), cascade.Deref(ks[j].KernelID)}] = j
		}
		for l := sp.SegmentStarts[i]; l < sp.SegmentEnd(i); l++ {
			launch := &in.Launches[l]
			j, ok := pos[launchKey{kernellist.NormalizeContext(launch.Context), launch.KernelID}]
			if !ok {
				return fmt.Errorf("segment %d of %d (run %s) has no results of launch %d (kernel %d %s)", i+1, len(ordered), s.ID, l, launch.KernelID, launch.Name)
			}
			k := ks[j]
			k.Simulated, k.ProjectedFrom = nil, nil
			k.LaunchUID = 0 // the segment's simulator's, not this run's
			if remap != nil && k.Stats != nil {
				if k.Stats, err = remap(k); err != nil {
					return err
				}
			}
			cycles += k.SimCycles
			buf = append(buf, k)
			if len(buf) == cap(buf) {
				if err := c.cfg.Store.AppendRunKernels(ctx, p.ID, written, buf); err != nil {
					return err
				}
				written += len(buf)
				buf = buf[:0]
			}
		}
		wall += s.Figures.WallSeconds
		peak = max(peak, s.Figures.PeakRSSBytes)
	}
	if len(buf) > 0 || written == 0 {
		if err := c.cfg.Store.AppendRunKernels(ctx, p.ID, written, buf); err != nil {
			return err
		}
	}

	first := ordered[0].Figures
	r, saved, err := c.cfg.Store.UpdateRun(ctx, p.ID, func(r *cascade.Run) error {
		if r.State.Final() || r.Split == nil {
			return cascade.ErrUnchanged
		}
		f := first
		// Its own figures: no one simulation's trace sum (so no later
		// full run reuses it), every segment's wall and peak.
		f.TraceSum, f.WallSeconds, f.PeakRSSBytes, f.SimCycles = "", wall, peak, cycles
		if !(f.CoreClockMHz > 0) {
			f.CoreClockMHz = r.Figures.CoreClockMHz
		}
		r.Figures = f
		s := *r.Split
		s.SimulatorSeconds = wall
		r.Split = &s
		succeed(r, counters, fmt.Sprintf("every segment succeeded: %d launches stitched from %d segments", sp.Launches, len(ordered)))
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		c.log.Info("split run succeeded", "run", p.ID, "cycles", cycles, "segments", len(ordered))
		c.publish(r)
		c.fullRunSucceeded(r)
	}
	return nil
}

// statRemap returns how to re-encode segment s's kernels' statistics in
// the order of table's counters; nil when s recorded the same ones.
func statRemap(table *simstats.Table, s cascade.Run) (func(k cascade.RunKernel) ([]byte, error), error) {
	names := make([]string, len(table.Counters))
	for i, c := range table.Counters {
		names[i] = c.Name
	}
	same := len(s.StatCounters) == len(names)
	for i := 0; same && i < len(names); i++ {
		same = s.StatCounters[i].Name == names[i]
	}
	if same {
		return nil, nil
	}
	st, err := runs.StatTable(s)
	if err != nil {
		return nil, err
	}
	from := make([]int, len(names))
	for i, n := range names {
		from[i] = slices.IndexFunc(s.StatCounters, func(c cascade.StatCounter) bool { return c.Name == n })
	}
	return func(k cascade.RunKernel) ([]byte, error) {
		v, err := runs.DecodeStats(st, k)
		if err != nil {
			return nil, err
		}
		out := make(simstats.Values, len(names))
		for i, f := range from {
			out[i] = simstats.Absent
			if f >= 0 && f < len(v) {
				out[i] = v[f]
			}
		}
		return simstats.Encode(nil, out), nil
	}, nil
}
