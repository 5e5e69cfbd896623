package results

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// Where a trace's measured kernel times come from, the times its runs'
// kernels are compared with (Results.Comparison, RunKernel.MeasuredNs):
//
//   - its real timing (real_timing.json, or the file metadata.json names
//     in real_timing), when it has one (Trace.HasRealTiming: rows with a
//     kernel_id), whatever its profiles hold;
//   - else the durations its hardware profiles measured (Nsight
//     Compute's gpu__time_duration.sum, nvprof's Duration, in ns), kept
//     per traced kernel as the counter hwprofile.DurationStat, the mean
//     over the profiles that measured it;
//   - else none.

// maxCachedProfileTimes bounds the cache of traces' profile durations.
const maxCachedProfileTimes = 16

// MeasuredTimesFrom says where the trace's measured kernel times come
// from: "real_timing.json: duration_ns" (or "cycles", or both, as its rows
// have them; adding which profile durations are not used, when some are
// there too), "profiles/ncu.csv: gpu__time_duration.sum", or nil when it
// has none: no real timing and no profile durations, or real timing none
// of whose rows has a time (its runs' timingProblems say so).
func (m *Reader) MeasuredTimesFrom(t cascade.Trace) *string {
	var durations []string
	for _, p := range t.Profiles {
		if p.Durations != "" && p.Error == "" && p.Matched > 0 {
			durations = append(durations, p.File+": "+p.Durations)
		}
	}
	switch {
	case t.HasRealTiming:
		tt := m.timing(context.Background(), t)
		var s string
		name := m.realTimingName(t)
		switch {
		case tt.durRows > 0 && tt.cycRows > 0:
			s = name + ": duration_ns, and cycles where a row has no duration_ns (at the run's core clock: simulated against measured cycles)"
		case tt.durRows > 0:
			s = name + ": duration_ns"
		case tt.cycRows > 0:
			s = name + ": cycles (at the run's core clock: simulated against measured cycles)"
		default:
			return nil
		}
		if len(durations) > 0 {
			s += fmt.Sprintf(" (real timing first: the profiles' durations, %s, are not used)", strings.Join(durations, "; "))
		}
		return &s
	case len(durations) > 0:
		s := strings.Join(durations, "; ")
		if len(durations) > 1 {
			s += " (each kernel's mean over them)"
		}
		return &s
	}
	return nil
}

// realTimingName is the trace's real-timing file, as a path in its
// directory.
func (m *Reader) realTimingName(t cascade.Trace) string {
	dir := filepath.Join(m.cfg.BucketDir, t.ID)
	if p, err := tracedir.RealTimingPath(dir); err == nil {
		if rel, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return tracedir.RealTimingFile
}

// profileTimes returns the durations the trace's profiles measured, one
// timing row per kernel that has one; nil when it has none. They are
// kept for the trace's version: reading its profiles again changes it.
func (m *Reader) profileTimes(ctx context.Context, t cascade.Trace) ([]tracedir.TimingRow, error) {
	if m.MeasuredTimesFrom(t) == nil {
		return nil, nil
	}
	key := fmt.Sprint(t.ID, "@", t.UpdatedAt.UnixNano())
	if rows, ok := m.profileRows.Get(key); ok {
		return rows, nil
	}
	rows := []tracedir.TimingRow{}
	for after := ""; ; {
		page, err := m.cfg.Store.Kernels(ctx, t.ID, "", cascade.Page{First: cascade.MaxPageSize, After: after})
		if err != nil {
			return nil, err
		}
		ks := page.Items
		if len(ks) == 0 {
			break
		}
		cs, err := m.cfg.Store.KernelCounters(ctx, t.ID, ks[0].Seq, ks[len(ks)-1].Seq+1)
		if err != nil {
			return nil, err
		}
		ns := map[int]float64{}
		for _, c := range cs {
			if c.Stat == hwprofile.DurationStat {
				ns[c.Seq] = c.Mean
			}
		}
		for _, k := range ks {
			if d, ok := ns[k.Seq]; ok {
				rows = append(rows, tracedir.TimingRow{KernelID: k.KernelID, KernelName: k.Name,
					Context: kernellist.NormalizeContext(cascade.Deref(k.Context)), DurationNs: &d})
			}
		}
		if !page.HasNext {
			break
		}
		after = cascade.Cursor(int64(ks[len(ks)-1].Seq))
	}
	m.profileRows.Put(key, rows)
	return rows, nil
}
