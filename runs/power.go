package runs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// recordPower reads the power report AccelWattch wrote in the run's
// directory, when it was simulated with -power_simulation_enabled 1 (by
// its config, or an override), into its kernels' statistics: each stored
// kernel's values get those of accelwattch.Counters after them (power,
// its breakdown, energy at the run's core clock), matched by launch uid,
// absent for a kernel the report does not have. It returns the run's
// counters with power's after them, for finish to record with its end;
// nil, having changed nothing, when there is no report (a run without
// power is recorded exactly as before) or the run has power's counters
// already. The local and the Slurm executor alike leave the report
// there: the simulator's working directory is the run's.
//
// Kernels are read and rewritten a page at a time, and the report read
// as they are (its blocks come in launch order, as the kernels do): a
// run of many kernels costs the memory of a page, not of the run.
func (m *Manager) recordPower(ctx context.Context, id string) ([]cascade.StatCounter, error) {
	path := filepath.Join(m.runDir(id), accelwattch.ReportName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := m.cfg.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	base := r.StatCounters
	if base == nil {
		base = statCounters(m.cfg.StatsTable)
	}
	if slices.ContainsFunc(base, func(c cascade.StatCounter) bool { return c.Name == accelwattch.PowerCounter }) {
		return nil, nil
	}
	counters := slices.Clone(base)
	for _, c := range accelwattch.Counters() {
		counters = append(counters, cascade.StatCounter{Name: c.Name, Kind: string(c.Kind), Unit: c.Unit})
	}
	table, err := StatTable(cascade.Run{ID: id, StatCounters: base})
	if err != nil {
		return nil, err
	}
	if _, err := StatTable(cascade.Run{ID: id, StatCounters: counters}); err != nil {
		return nil, err // a counter of CASCADE_SIM_STATS_FILE named as one of power's
	}
	report := powerBlocks{r: accelwattch.NewReader(f, path), byUID: map[int]accelwattch.Kernel{}}
	absent := make(simstats.Values, len(accelwattch.Counters()))
	for i := range absent {
		absent[i] = simstats.Absent
	}
	page := cascade.Page{First: powerPageSize}
	for {
		ks, err := m.cfg.Store.RunKernelPage(ctx, id, page)
		if err != nil {
			return nil, err
		}
		for i := range ks.Items {
			k := &ks.Items[i]
			v, err := DecodeStats(table, *k)
			if err != nil {
				return nil, err
			}
			p, ok, err := report.find(k.LaunchUID)
			if err != nil {
				return nil, err
			}
			if ok {
				v = append(v, p.Values(k.SimCycles, r.Figures.CoreClockMHz)...)
			} else {
				v = append(v, absent...)
			}
			k.Stats = simstats.Encode(nil, v)
		}
		if err := m.cfg.Store.SetRunKernelStats(ctx, id, ks.Items); err != nil {
			return nil, err
		}
		if !ks.HasNext || len(ks.Items) == 0 {
			return counters, nil
		}
		page.After = cascade.Cursor(int64(ks.Items[len(ks.Items)-1].Seq))
	}
}

// powerPageSize is how many kernels recordPower reads and rewrites at a
// time.
var powerPageSize = cascade.MaxPageSize

// powerBlocks finds a report's blocks by launch uid, reading it no
// further than the block asked for: blocks passed on the way are kept
// until asked for.
type powerBlocks struct {
	r     *accelwattch.Reader
	byUID map[int]accelwattch.Kernel
	eof   bool
}

// find returns the block of the kernel of launch uid uid; false when the
// report has none (or uid is 0: a kernel whose log gave no uid).
func (b *powerBlocks) find(uid int) (accelwattch.Kernel, bool, error) {
	if uid <= 0 {
		return accelwattch.Kernel{}, false, nil
	}
	for {
		if k, ok := b.byUID[uid]; ok {
			delete(b.byUID, uid)
			return k, true, nil
		}
		if b.eof {
			return accelwattch.Kernel{}, false, nil
		}
		k, err := b.r.Next()
		if err == io.EOF {
			b.eof = true
			continue
		}
		if err != nil {
			return accelwattch.Kernel{}, false, err
		}
		if k.UID > 0 {
			b.byUID[k.UID] = k
		}
	}
}
