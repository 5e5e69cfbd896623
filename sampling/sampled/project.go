package sampled

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/sampling"
)

// projectChunk is the kernels of a sampled run built and stored at once:
// a trace may hold a million launches.
var projectChunk = 1 << 16

// projectSampled records the end of sampled run p, all of whose segments
// segs succeeded: every launch of its trace projected from the
// representatives' simulations (sampling.Project), stored as its kernels,
// then its figures and SUCCEEDED, in that order, so that it is never seen
// SUCCEEDED without its kernels.
func (c *Coordinator) projectSampled(ctx context.Context, p cascade.Run, segs []cascade.Run) error {
	plan, err := c.cfg.Plans.SamplingPlan(ctx, p.Sampling.PlanID)
	if err != nil {
		return fmt.Errorf("read plan %s: %w", p.Sampling.PlanID, err)
	}
	if plan.Strata, err = c.cfg.Plans.SamplingStrata(ctx, plan.ID); err != nil {
		return fmt.Errorf("read plan %s: %w", plan.ID, err)
	}
	t, err := c.cfg.Store.Trace(ctx, p.TraceID)
	if err != nil {
		return err
	}
	in, err := c.cfg.Plans.Input(ctx, t)
	if err != nil {
		return err
	}
	if len(in.Launches) != plan.Launches {
		return fmt.Errorf("plan %s has %d launches, its trace now %d", plan.ID, plan.Launches, len(in.Launches))
	}
	var counters []cascade.StatCounter
	if len(segs) > 0 {
		counters = segs[0].StatCounters
	}
	table, err := runs.StatTable(cascade.Run{ID: p.ID, StatCounters: counters})
	if err != nil {
		return err
	}
	warmups := make(map[string]int, len(p.Sampling.SegmentWarmups))
	for i, w := range p.Sampling.SegmentWarmups {
		if i < len(p.Sampling.SegmentIDs) {
			warmups[p.Sampling.SegmentIDs[i]] = w
		}
	}
	sim, simK, err := c.segmentResults(ctx, plan, in, segs, warmups, counters, table)
	if err != nil {
		return err
	}
	warming, err := c.warming(ctx, segs)
	if err != nil {
		return err
	}
	pr, err := sampling.ProjectWith(plan, in, sim, warming)
	if err != nil {
		return err
	}
	if err := c.storeProjection(ctx, p.ID, plan, in, pr, simK); err != nil {
		return err
	}

	var wall float64
	var peak int64
	for _, s := range segs {
		wall += s.Figures.WallSeconds
		peak = max(peak, s.Figures.PeakRSSBytes)
	}
	r, saved, err := c.cfg.Store.UpdateRun(ctx, p.ID, func(r *cascade.Run) error {
		if r.State.Final() || r.Sampling == nil {
			return cascade.ErrUnchanged
		}
		s := *r.Sampling
		total, low, high, e := pr.Total, pr.Low, pr.High, pr.Error
		s.ProjectedCycles, s.CILowCycles, s.CIHighCycles, s.ExpectedError = &total, &low, &high, &e
		if len(segs) > 0 {
			f := segs[0].Figures
			f.WallSeconds, f.PeakRSSBytes = wall, peak
			if !(f.CoreClockMHz > 0) {
				f.CoreClockMHz = r.Figures.CoreClockMHz
			}
			r.Figures = f
		}
		if c := r.Figures.CoreClockMHz; c > 0 {
			ns := total * 1000 / c
			s.ProjectedNs = &ns
		}
		r.Figures.SimCycles = int64(math.Round(total))
		s.SimulatorSeconds = wall
		s.FullRunSecondsEstimate = fullRunEstimate(wall, s.SimulatedInstructions, s.Instructions)
		r.Sampling = &s
		succeed(r, counters, fmt.Sprintf("every segment succeeded: %d launches projected from %d representatives", plan.Launches, len(sim)))
		return nil
	})
	if err != nil {
		return err
	}
	if saved {
		c.log.Info("sampled run succeeded", "run", p.ID, "projected_cycles", pr.Total, "expected_error", pr.Error)
		c.publish(r)
	}
	return nil
}

// warming is how segs started, for the warm-up allowance of the run's
// interval: sampling.Cold when one of them, or the run a reused one is
// the same as, records that its L2 could not be warmed (runs.NotWarmed)
// or only in part (runs.WarmedInPart: a trace-less trace without the
// warming windows),
// else sampling.L2Warmed (warmed, or started as the full simulation
// does: at the trace's first launch, or under a config that empties L2
// between kernels).
func (c *Coordinator) warming(ctx context.Context, segs []cascade.Run) (sampling.Warming, error) {
	for _, s := range segs {
		h := s.History
		if s.SameAsID != nil {
			o, err := c.cfg.Store.Run(ctx, *s.SameAsID)
			if err != nil {
				return sampling.Cold, fmt.Errorf("read run %s, reused by segment %s: %w", *s.SameAsID, s.ID, err)
			}
			h = o.History
		}
		if slices.ContainsFunc(h, func(l string) bool {
			return strings.Contains(l, " "+runs.NotWarmed) || strings.Contains(l, " "+runs.WarmedInPart)
		}) {
			return sampling.Cold, nil
		}
	}
	return sampling.L2Warmed, nil
}

// launchKey names a launch as a segment's kernel results do.
type launchKey struct {
	ctx string // normalized
	id  int
}

// segmentResults reads the segments' kernel results and returns those of
// the plan's representatives, by launch: their cycles and statistics (in
// table's counters' order) for sampling.Project, and the results
// themselves.
func (c *Coordinator) segmentResults(ctx context.Context, plan sampling.Plan, in sampling.Input, segs []cascade.Run, warmups map[string]int, counters []cascade.StatCounter, table *simstats.Table) (map[int]sampling.Simulated, map[int]cascade.RunKernel, error) {
	rep := map[int]bool{}
	for h := range plan.Strata {
		for _, r := range plan.Strata[h].Representatives {
			rep[r.Launch] = true
		}
	}
	pos := make(map[launchKey]int, len(rep))
	for i, l := range in.Launches {
		if rep[i] {
			pos[launchKey{kernellist.NormalizeContext(l.Context), l.KernelID}] = i
		}
	}
	sim := make(map[int]sampling.Simulated, len(rep))
	simK := make(map[int]cascade.RunKernel, len(rep))
	for _, s := range segs {
		ks, err := c.cfg.Store.RunKernels(ctx, s.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("read segment %s's kernels: %w", s.ID, err)
		}
		sameCounters := slices.Equal(s.StatCounters, counters)
		// The launches it warms up with: a cut segment's second part's
		// hold the first part's last representatives (sampling.CutRanges),
		// which are read from the first part.
		warm := s.KernelIDs[:min(warmups[s.ID], len(s.KernelIDs))]
		for _, k := range ks {
			l, ok := pos[launchKey{kernellist.NormalizeContext(cascade.Deref(k.Context)), cascade.Deref(k.KernelID)}]
			if !ok || slices.Contains(warm, cascade.Deref(k.KernelID)) {
				continue // warm-up
			}
			var stats []float64
			if len(table.Counters) > 0 {
				if sameCounters {
					if stats, err = runs.DecodeStats(table, k); err != nil {
						return nil, nil, err
					}
				} else {
					stats = absentStats(len(table.Counters))
				}
			}
			sim[l] = sampling.Simulated{Cycles: float64(k.SimCycles), Stats: stats}
			simK[l] = k
		}
	}
	return sim, simK, nil
}

func absentStats(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = simstats.Absent
	}
	return v
}

// storeProjection stores a sampled run's kernels, one per launch of the
// trace in launch order, projectChunk at a time: a representative's are
// its simulated results (Simulated), any other launch's its projected
// cycles, its instructions scaled from the representative it is
// projected from by their warp instructions, and its statistics as
// sampling.Projection.LaunchStats scales them.
func (c *Coordinator) storeProjection(ctx context.Context, runID string, plan sampling.Plan, in sampling.Input, pr sampling.Projection, simK map[int]cascade.RunKernel) error {
	from := make([]int32, len(in.Launches))
	for i := range from {
		from[i] = -1
	}
	for h := range plan.Strata {
		st := &plan.Strata[h]
		src := -1
		for _, r := range st.Representatives {
			if _, ok := simK[r.Launch]; ok {
				src = r.Launch
				break
			}
		}
		for _, i := range st.Members {
			from[i] = int32(src)
		}
	}
	yes, no := true, false
	buf := make([]cascade.RunKernel, 0, min(projectChunk, len(in.Launches)))
	written := 0
	flush := func() error {
		if err := c.cfg.Store.AppendRunKernels(ctx, runID, written, buf); err != nil {
			return err
		}
		written += len(buf)
		buf = buf[:0]
		return nil
	}
	for i := range in.Launches {
		l := &in.Launches[i]
		id := l.KernelID
		var k cascade.RunKernel
		if sk, ok := simK[i]; ok {
			k = sk
			k.Simulated, k.ProjectedFrom = &yes, nil
		} else {
			k = cascade.RunKernel{Name: l.Name, Simulated: &no}
			k.SimCycles = int64(math.Round(pr.Cycles[i]))
			if f := int(from[i]); f >= 0 {
				k.ProjectedFrom = &f
				src := simK[f]
				ratio := 1.0
				if w := in.Launches[f].WarpInstructions; w > 0 && l.WarpInstructions >= 0 {
					ratio = float64(l.WarpInstructions) / float64(w)
				}
				k.SimInstructions = int64(math.Round(float64(src.SimInstructions) * ratio))
				k.TraceFile = ""
			}
			if k.SimCycles > 0 {
				k.IPC = float64(k.SimInstructions) / float64(k.SimCycles)
			}
			if v := pr.LaunchStats(i); v != nil {
				k.Stats = simstats.Encode(nil, v)
			}
		}
		k.KernelID = &id
		k.Context = nil
		if l.Context != "" {
			c := l.Context
			k.Context = &c
		}
		k.Name = l.Name
		buf = append(buf, k)
		if len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(buf) > 0 || written == 0 {
		return flush()
	}
	return nil
}

// succeed marks r, a sampled or split run whose kernels are stored,
// SUCCEEDED with its statistics counters, noting why in its history.
func succeed(r *cascade.Run, counters []cascade.StatCounter, note string) {
	r.StatCounters = counters
	now := time.Now().UTC()
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	r.State, r.FinishedAt, r.KernelsDone = cascade.RunSucceeded, &now, r.KernelsTotal
	r.FailureClass, r.FailureLine = "", ""
	r.History = append(r.History, runs.Stamp(note))
}
