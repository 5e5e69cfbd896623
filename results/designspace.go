package results

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/sampling"
)

// DesignSpace is a sweep's grid cell by cell (see [cascade.DesignSpace]),
// speedups against the cell baseline names ("" for the default). Each
// succeeded run is read once, a page of kernels at a time (all of a run's
// at once only for a trace with a step timeline, whose steps need them),
// and added to its cell's sums, which the last few sweeps' keep; the sums
// start again when a run they hold has changed or is gone, or a trace's
// row changed since its timeline was read. An unknown baseline is
// BAD_USER_INPUT.
func (m *Reader) DesignSpace(ctx context.Context, id, baseline string) (*cascade.DesignSpace, error) {
	s, err := m.cfg.Store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	t := m.designs.GetOrPut(id, newDesignTally)
	t.mu.Lock() // the runs are read under it, so no caller adds older ones
	defer t.mu.Unlock()
	rs, err := m.cfg.Store.SweepRuns(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := m.addDesignRuns(ctx, t, rs); err != nil {
		return nil, err
	}
	ds, err := t.space(s, rs, m.shipped(s), baseline)
	if err != nil {
		return nil, err
	}
	return ds, m.pairSpeedups(ctx, t, ds, rs)
}

// maxCachedDesigns bounds the sweeps whose sums are kept.
const maxCachedDesigns = 16

// designTally is the sums of a sweep's succeeded runs so far, by cell.
type designTally struct {
	mu       sync.Mutex
	added    map[string]time.Time // run id: its UpdatedAt when added
	traces   map[string]time.Time // trace id: its UpdatedAt when its timeline was read
	cells    map[string]*designSums
	kernels  []string // names in the order first met
	kernelAt map[string]int
	steps    []stepKey
	measure  map[stepKey]float64 // a step's measured time
	// validation are the sweep's validation runs (full runs a sampled
	// run is checked against), whose sums are full's, not cells'.
	validation map[string]bool
	full       map[string]*designSums
	paired     map[string]sampling.Speedup // by pairedKey
}

type stepKey struct {
	trace string
	step  int
}

// designSums is what one cell's succeeded runs add up to.
type designSums struct {
	succeeded, timed, sampled, noInterval int
	cycles, ns, lowNs, highNs             float64
	// powered counts the runs with AccelWattch's energy, energy and
	// insts their joules and warp instructions.
	powered       int
	energy, insts float64
	kernels       map[string]float64 // ns by kernel name
	steps         map[stepKey]float64
}

func newDesignTally() *designTally {
	t := &designTally{}
	t.reset()
	return t
}

func (t *designTally) reset() {
	t.added, t.traces, t.cells = map[string]time.Time{}, map[string]time.Time{}, map[string]*designSums{}
	t.kernels, t.kernelAt, t.steps, t.measure = nil, map[string]int{}, nil, map[stepKey]float64{}
	t.validation, t.full, t.paired = map[string]bool{}, map[string]*designSums{}, map[string]sampling.Speedup{}
}

// addDesignRuns adds to t the succeeded runs of rs it has not added,
// after starting t again if it is stale. Segments of sampled runs are
// not cells' runs: their sampled run stands for them.
func (m *Reader) addDesignRuns(ctx context.Context, t *designTally, rs []cascade.Run) error {
	for _, r := range rs {
		if r.Sampling != nil && r.Sampling.ValidationRunID != nil {
			t.validation[*r.Sampling.ValidationRunID] = true
		}
	}
	succeeded := map[string]time.Time{}
	for _, r := range rs {
		if r.State == cascade.RunSucceeded && r.SampledByID == nil {
			succeeded[r.ID] = r.UpdatedAt
		}
	}
	for id, at := range t.added {
		if v, ok := succeeded[id]; !ok || !v.Equal(at) {
			t.reset()
			break
		}
	}
	traces := map[string]cascade.Trace{}
	timings := map[string]*traceTiming{}
	cfgs, cfgsErr := m.cfg.Configs.SimConfigs()
	for _, r := range rs {
		if _, ok := succeeded[r.ID]; !ok {
			continue
		}
		if _, ok := t.added[r.ID]; ok {
			continue
		}
		tr, ok := traces[r.TraceID]
		if !ok {
			var err error
			if tr, err = m.cfg.Store.Trace(ctx, r.TraceID); err != nil {
				return err
			}
			traces[r.TraceID] = tr
			if at, ok := t.traces[tr.ID]; ok && !at.Equal(tr.UpdatedAt) {
				t.reset()
				return m.addDesignRuns(ctx, t, rs)
			}
		}
		cfg, _ := recordedConfig(cfgs, cfgsErr, "", r)
		into := t.cells
		if t.validation[r.ID] {
			into = t.full
		}
		sums := into[r.SimConfig]
		if sums == nil {
			sums = &designSums{kernels: map[string]float64{}, steps: map[stepKey]float64{}}
			into[r.SimConfig] = sums
		}
		if err := m.addDesignRun(ctx, t, sums, r, tr, cfg, timings); err != nil {
			return err
		}
		t.added[r.ID] = r.UpdatedAt
	}
	return nil
}

// addDesignRun adds succeeded run r, of trace tr, under cfg to its
// cell's sums.
func (m *Reader) addDesignRun(ctx context.Context, t *designTally, sums *designSums, r cascade.Run, tr cascade.Trace,
	cfg cascade.SimConfig, timings map[string]*traceTiming) error {
	clock := cfg.CoreClockMHz
	ns := func(cycles float64) float64 { return cycles * 1000 / clock }
	byName := map[string]float64{} // cycles
	var cycles, energy, insts float64
	energyAt := slices.IndexFunc(r.StatCounters, func(c cascade.StatCounter) bool { return c.Name == accelwattch.EnergyCounter })
	addKernels := func(ks []cascade.RunKernel) {
		for _, k := range ks {
			if energyAt >= 0 {
				if v, err := simstats.Decode(k.Stats); err == nil && energyAt < len(v) && !math.IsNaN(v[energyAt]) {
					energy += v[energyAt]
				}
				insts += float64(k.SimInstructions)
			}
			if _, ok := t.kernelAt[k.Name]; !ok {
				t.kernelAt[k.Name] = len(t.kernels)
				t.kernels = append(t.kernels, k.Name)
			}
			byName[k.Name] += float64(k.SimCycles)
			cycles += float64(k.SimCycles)
		}
	}
	if tr.HasStepTimeline {
		tt, ok := timings[tr.ID]
		if !ok {
			v := m.timing(ctx, tr)
			tt, timings[tr.ID] = &v, &v
			t.traces[tr.ID] = tr.UpdatedAt
		}
		ks, err := m.cfg.Store.RunKernels(ctx, r.ID)
		if err != nil {
			return err
		}
		addKernels(ks)
		if tt.timeline != nil && clock > 0 {
			res := traceTiming{timeline: tt.timeline, mapping: tt.mapping}.results(ks, cfg)
			for _, st := range res.Steps {
				key := stepKey{tr.ID, st.Step}
				if _, ok := t.measure[key]; !ok {
					t.steps = append(t.steps, key)
					t.measure[key] = st.MeasuredNs
				}
				sums.steps[key] += st.ProjectedNs
			}
		}
	} else {
		p := cascade.Page{First: cascade.MaxPageSize}
		for {
			pg, err := m.cfg.Store.RunKernelPage(ctx, r.ID, p)
			if err != nil {
				return err
			}
			addKernels(pg.Items)
			if !pg.HasNext || len(pg.Items) == 0 {
				break
			}
			p.After = cascade.Cursor(int64(lastSeq(pg.Items)))
		}
	}
	sums.succeeded++
	low, high := cycles, cycles
	if sr := r.Sampling; sr != nil {
		sums.sampled++
		if sr.ProjectedCycles != nil {
			cycles, low, high = *sr.ProjectedCycles, *sr.ProjectedCycles, *sr.ProjectedCycles
		}
		if sr.CILowCycles != nil && sr.CIHighCycles != nil {
			low, high = *sr.CILowCycles, *sr.CIHighCycles
		} else {
			sums.noInterval++
		}
	}
	sums.cycles += cycles
	if energyAt >= 0 && energy > 0 {
		sums.powered++
		sums.energy += energy
		sums.insts += insts
	}
	if clock > 0 {
		sums.timed++
		sums.ns += ns(cycles)
		sums.lowNs += ns(low)
		sums.highNs += ns(high)
		for name, c := range byName {
			sums.kernels[name] += ns(c)
		}
	}
	return nil
}

// shipped is, for each base config of s's cells, the value it ships
// with of each of s's option axes; a base that cannot be read has none.
func (m *Reader) shipped(s cascade.Sweep) func(base string, axis int) (string, bool) {
	cfgs, err := m.cfg.Configs.SimConfigs()
	values := map[string][]*string{}
	return func(base string, axis int) (string, bool) {
		vs, ok := values[base]
		if !ok {
			vs = make([]*string, len(s.Axes))
			if c, found := simconfig.Find(cfgs, base); err == nil && found {
				for i, a := range s.Axes {
					if a.Option == "" {
						continue
					}
					if v, ok, err := simconfig.Value(c, a.Option); err == nil && ok {
						vs[i] = &v
					}
				}
			}
			values[base] = vs
		}
		if axis >= len(vs) || vs[axis] == nil {
			return "", false
		}
		return *vs[axis], true
	}
}

// sameValue reports whether two values of an option are the same: as
// numbers when both are ("80" and "80.0"), else as written.
func sameValue(a, b string) bool {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	if errX == nil && errY == nil {
		return x == y
	}
	return a == b
}

// space is t's figures for sweep s with runs rs, cells in s's order,
// speedups against baseline ("" for the default: see
// [cascade.DesignSpace]). shipped gives a base config's value of an
// option axis.
func (t *designTally) space(s cascade.Sweep, rs []cascade.Run, shipped func(base string, axis int) (string, bool), baseline string) (*cascade.DesignSpace, error) {
	ds := &cascade.DesignSpace{Axes: s.Axes, Cells: make([]cascade.DesignCell, len(s.SimConfigs))}
	if ds.Axes == nil {
		ds.Axes = []cascade.SweepAxis{}
	}
	prod := 1
	for _, a := range s.Axes {
		prod *= len(a.Values)
	}
	at := map[string]int{}
	for i, name := range s.SimConfigs {
		c := &ds.Cells[i]
		c.SimConfig, c.Values = name, make([]string, len(s.Axes))
		if prod > 0 && len(s.SimConfigs)%prod == 0 { // cells in grid order, the last axis fastest
			k := i % prod
			for j := len(s.Axes) - 1; j >= 0; j-- {
				n := len(s.Axes[j].Values)
				c.Values[j] = s.Axes[j].Values[k%n]
				k /= n
			}
		}
		at[name] = i
	}
	for _, r := range rs {
		i, ok := at[r.SimConfig]
		if !ok || r.SampledByID != nil || t.validation[r.ID] {
			continue
		}
		c := &ds.Cells[i]
		c.Runs++
		if c.Base == "" {
			c.Base = r.BaseConfig()
		}
	}
	for i := range ds.Cells {
		c := &ds.Cells[i]
		c.Shipped = c.Base != "" && (len(s.Axes) > 0 || c.Base == c.SimConfig)
		for j, a := range s.Axes {
			v, ok := shipped(c.Base, j)
			if a.Option == "" && c.Values[j] != "" || a.Option != "" && (!ok || !sameValue(v, c.Values[j])) {
				c.Shipped = false
			}
		}
		sums := t.cells[c.SimConfig]
		if sums == nil {
			continue
		}
		c.Succeeded, c.Timed, c.Sampled = sums.succeeded, sums.timed, sums.sampled
		if sums.succeeded > 0 {
			c.Cycles = cascade.Ptr(sums.cycles)
		}
		if sums.powered > 0 && sums.powered == sums.succeeded {
			c.EnergyJ, c.InstsPerJoule = cascade.Ptr(sums.energy), cascade.Ptr(sums.insts/sums.energy)
			if sums.timed == sums.succeeded && sums.ns > 0 {
				c.AvgPowerW = cascade.Ptr(sums.energy / (sums.ns * 1e-9))
			}
		}
		if sums.succeeded > 0 && sums.timed == sums.succeeded {
			c.TimeNs = cascade.Ptr(sums.ns)
			if sums.sampled > 0 && sums.noInterval == 0 {
				c.TimeLowNs, c.TimeHighNs = cascade.Ptr(sums.lowNs), cascade.Ptr(sums.highNs)
			}
		}
	}
	b := -1
	for i, c := range ds.Cells {
		if baseline != "" && c.SimConfig == baseline || baseline == "" && b < 0 && c.Shipped {
			b = i
		}
	}
	if baseline != "" && b < 0 {
		return nil, cascade.Errorf(cascade.EINVALID, "baseline: %q is not a cell of sweep %s", baseline, s.ID)
	}
	if b < 0 && len(ds.Cells) > 0 {
		b = 0
	}
	if b < 0 {
		return ds, nil
	}
	base := ds.Cells[b]
	ds.Baseline = base.SimConfig
	for i := range ds.Cells {
		c := &ds.Cells[i]
		if f := t.full[c.SimConfig]; f != nil && f.succeeded > 0 && f.timed == f.succeeded {
			c.FullTimeNs = cascade.Ptr(f.ns)
		}
	}
	base = ds.Cells[b]
	for i := range ds.Cells {
		c := &ds.Cells[i]
		c.Speedup = ratio(base.TimeNs, c.TimeNs)
		c.FullSpeedup = ratio(base.FullTimeNs, c.FullTimeNs)
		if c.Speedup != nil && c.FullSpeedup != nil {
			c.SpeedupErrorPct = cascade.Ptr(100 * (*c.Speedup - *c.FullSpeedup) / *c.FullSpeedup)
		}
		if c.TimeLowNs != nil || base.TimeLowNs != nil {
			c.SpeedupLow = ratio(or(base.TimeLowNs, base.TimeNs), or(c.TimeHighNs, c.TimeNs))
			c.SpeedupHigh = ratio(or(base.TimeHighNs, base.TimeNs), or(c.TimeLowNs, c.TimeNs))
		}
	}
	// perCell gives each cell's time of one kernel name or step, nil
	// where its runs have none, and the speedups against the baseline's.
	perCell := func(of func(*designSums) (float64, bool)) ([]*float64, []*float64) {
		times := make([]*float64, len(ds.Cells))
		for i, c := range ds.Cells {
			if sums := t.cells[c.SimConfig]; sums != nil && c.TimeNs != nil {
				if v, ok := of(sums); ok {
					times[i] = cascade.Ptr(v)
				}
			}
		}
		speedups := make([]*float64, len(ds.Cells))
		for i := range times {
			speedups[i] = ratio(times[b], times[i])
		}
		return times, speedups
	}
	ds.Kernels = make([]cascade.DesignKernel, 0, len(t.kernels))
	for _, name := range t.kernels {
		k := cascade.DesignKernel{Name: name}
		k.TimeNs, k.Speedup = perCell(func(s *designSums) (float64, bool) { v, ok := s.kernels[name]; return v, ok })
		ds.Kernels = append(ds.Kernels, k)
	}
	ds.Steps = make([]cascade.DesignStep, 0, len(t.steps))
	for _, key := range t.steps {
		st := cascade.DesignStep{TraceID: key.trace, Step: key.step, MeasuredNs: t.measure[key]}
		st.TimeNs, st.Speedup = perCell(func(s *designSums) (float64, bool) { v, ok := s.steps[key]; return v, ok })
		ds.Steps = append(ds.Steps, st)
	}
	return ds, nil
}

// ratio is *a / *b; nil when either is nil or b is not positive.
func ratio(a, b *float64) *float64 {
	if a == nil || b == nil || !(*b > 0) {
		return nil
	}
	return cascade.Ptr(*a / *b)
}

// or is a, or b when a is nil.
func or(a, b *float64) *float64 {
	if a != nil {
		return a
	}
	return b
}
