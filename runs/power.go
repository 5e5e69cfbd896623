package runs

import (
	"context"
	"errors"
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
func (m *Manager) recordPower(ctx context.Context, id string) ([]cascade.StatCounter, error) {
	path := filepath.Join(m.runDir(id), accelwattch.ReportName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	report, err := accelwattch.ReadFile(path)
	if err != nil {
		return nil, err
	}
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
	ks, err := m.cfg.Store.RunKernels(ctx, id)
	if err != nil {
		return nil, err
	}
	byUID := make(map[int]int, len(report))
	for i, k := range report {
		if k.UID > 0 {
			byUID[k.UID] = i
		}
	}
	absent := make(simstats.Values, len(accelwattch.Counters()))
	for i := range absent {
		absent[i] = simstats.Absent
	}
	for i := range ks {
		v, err := DecodeStats(table, ks[i])
		if err != nil {
			return nil, err
		}
		j, ok := byUID[ks[i].LaunchUID]
		if !ok && ks[i].LaunchUID == 0 && i < len(report) && report[i].UID == 0 {
			j, ok = i, true // neither says: in launch order
		}
		if ok {
			v = append(v, report[j].Values(ks[i].SimCycles, r.Figures.CoreClockMHz)...)
		} else {
			v = append(v, absent...)
		}
		ks[i].Stats = simstats.Encode(nil, v)
	}
	if err := m.cfg.Store.AppendRunKernels(ctx, id, 0, ks); err != nil {
		return nil, err
	}
	return counters, nil
}
