package results

import (
	"context"
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/runs"
)

// configsCSVColumns are the columns of a trace's configs-compared CSV
// before the statistics.
var configsCSVColumns = []string{"scope", "kernel_id", "context", "name", "config", "run_id", "sim_cycles", "sim_time_ns",
	"ipc", "measured_ns", "error_pct", "sampled"}

// WriteConfigsCSV writes what each config's latest succeeded run of the
// trace gave (see [Reader.ConfigComparison]) to w as CSV, the table
// Accel-Sim's get_stats.py prints turned so a notebook can pivot it: one
// row per config for the run as a whole (scope "run": its cycles, time
// and IPC over every kernel, its statistics' totals, and against the
// measured total when the trace has timing), then one row per kernel and
// config (scope "kernel"), kernels in id order. The statistics are every
// statistic any of the runs has, by name, in the order first met; a value
// a run has not is an empty field, as is a measured time the trace has
// not. It is written whether the trace has measured timing or not.
// Column sampled says whether the config's run is a sampled run (a config
// has one only when it has no other succeeded run): its kernels' cycles
// are then projected from its representatives.
func (m *Reader) WriteConfigsCSV(ctx context.Context, w io.Writer, traceID string) error {
	cs, res, err := m.configComparison(ctx, traceID)
	if err != nil {
		return err
	}
	var names []string
	cols := make([][]cascade.StatCounter, len(cs))
	for i, c := range cs {
		if c.Run == nil {
			continue
		}
		cols[i] = runs.StatColumns(*c.Run)
		for _, sc := range cols[i] {
			if !slices.Contains(names, sc.Name) {
				names = append(names, sc.Name)
			}
		}
	}
	header := slices.Clone(configsCSVColumns)
	for _, n := range names {
		if slices.Contains(configsCSVColumns, n) {
			n = "stat_" + n
		}
		header = append(header, n)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	// at places a run's statistics in the header's order.
	at := func(i int, vs []float64) []string {
		out := make([]string, len(names))
		for j, sc := range cols[i] {
			if j < len(vs) {
				out[slices.Index(names, sc.Name)] = optFloat(present(vs[j]))
			}
		}
		return out
	}
	for i, c := range cs {
		if c.Run == nil {
			continue
		}
		tot, err := m.StatTotals(ctx, *c.Run)
		if err != nil {
			return err
		}
		var cycles, insts int64
		for _, k := range res[i].Kernels {
			cycles += k.SimCycles
			insts += k.SimInstructions
		}
		var simNs, measured, errPct, ipc *float64
		if cfg, _ := m.runConfig(*c.Run); cfg.CoreClockMHz > 0 {
			simNs = cascade.Ptr(float64(cycles) * 1000 / cfg.CoreClockMHz)
		}
		if cycles > 0 {
			ipc = cascade.Ptr(float64(insts) / float64(cycles))
		}
		if cmp := c.Comparison; cmp != nil && cmp.MeasuredTotalNs > 0 {
			measured = &cmp.MeasuredTotalNs
			errPct = cascade.Ptr(100 * (cmp.SimTotalNs - cmp.MeasuredTotalNs) / cmp.MeasuredTotalNs)
		}
		row := []string{"run", "", "", "", c.SimConfig, c.Run.ID, strconv.FormatInt(cycles, 10), optFloat(simNs),
			optFloat(ipc), optFloat(measured), optFloat(errPct), strconv.FormatBool(c.Run.Sampling != nil)}
		if err := cw.Write(append(row, at(i, tot.Values)...)); err != nil {
			return err
		}
	}
	tables := make([]*simstats.Table, len(cs))
	index := make([]map[kernelRef]int, len(cs)) // by config: where each kernel is in its run's
	for i, c := range cs {
		if c.Run == nil {
			continue
		}
		if tables[i], err = runs.StatTable(*c.Run); err != nil {
			return err
		}
		index[i] = map[kernelRef]int{}
		for j, k := range res[i].Kernels {
			if k.KernelID != nil {
				index[i][kernelRef{*k.KernelID, cascade.Deref(k.Context)}] = j
			}
		}
	}
	for _, k := range alignKernels(res) {
		for i, c := range cs {
			j, ok := index[i][kernelRef{k.KernelID, cascade.Deref(k.Context)}]
			if c.Run == nil || !ok {
				continue
			}
			rk := res[i].Kernels[j]
			stats, err := runs.KernelStats(tables[i], rk)
			if err != nil {
				return err
			}
			row := []string{"kernel", strconv.Itoa(k.KernelID), cascade.Deref(k.Context), k.Name, c.SimConfig, c.Run.ID,
				strconv.FormatInt(rk.SimCycles, 10), optFloat(rk.SimTimeNs), formatFloat(rk.IPC), optFloat(rk.MeasuredNs), optFloat(rk.ErrorPct),
				strconv.FormatBool(c.Run.Sampling != nil)}
			if err := cw.Write(append(row, at(i, stats)...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// kernelRef names a traced kernel: its id in its context.
type kernelRef struct {
	id  int
	ctx string
}

// optFloat is *v in decimal, "" for nil.
func optFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return formatFloat(*v)
}
