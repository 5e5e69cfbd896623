package results

import (
	"context"
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// kernelsCSVColumns are the columns of a run's kernels CSV before its
// statistics.
var kernelsCSVColumns = []string{"seq", "kernel_id", "context", "name", "launch_uid", "sim_cycles", "sim_instructions",
	"ipc", "sim_time_ns", "measured_ns", "error_pct"}

// sampledCSVColumns are the columns a sampled run's kernels CSV adds to
// kernelsCSVColumns, as its page shows them: whether the launch was
// simulated, the launch its cycles are projected from, and the full run's
// cycles and the error against them when the run is checked against one.
var sampledCSVColumns = []string{"simulated", "projected_from", "full_cycles", "full_error_pct"}

// KernelsCSVHeader is the header row of r's kernels CSV: the kernels'
// own columns (a sampled run's with sampledCSVColumns), then one per
// statistic of [runs.StatColumns], named by it (a statistic whose name is
// one of the kernel's own columns, as "ipc" is, is "stat_" and its name).
func KernelsCSVHeader(r cascade.Run) []string {
	h := slices.Clone(kernelsCSVColumns)
	if r.Sampling != nil {
		h = append(h, sampledCSVColumns...)
	}
	for _, c := range runs.StatColumns(r) {
		name := c.Name
		if slices.Contains(kernelsCSVColumns, name) {
			name = "stat_" + name
		}
		h = append(h, name)
	}
	return h
}

// WriteKernelsCSV writes r's kernels to w as CSV, one row per kernel in
// launch order under [KernelsCSVHeader]: a value that is absent (no
// measured time, a statistic the simulator printed as -nan or not at all)
// is an empty field. Kernels are read, joined with the trace's timing and
// written a page of pageSize at a time (cascade.MaxPageSize when 0), and
// w is flushed after each page when it can be (an http.ResponseWriter):
// a run of a million kernels streams in constant memory. An error after
// the first page leaves w with what was written.
func (m *Reader) WriteKernelsCSV(ctx context.Context, w io.Writer, r cascade.Run, pageSize int) error {
	if pageSize <= 0 {
		pageSize = cascade.MaxPageSize
	}
	t, err := runs.StatTable(r)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(KernelsCSVHeader(r)); err != nil {
		return err
	}
	var row []string
	err = m.KernelPages(ctx, r, pageSize, func(ks []cascade.RunKernel) error {
		for _, k := range ks {
			stats, err := runs.KernelStats(t, k)
			if err != nil {
				return err
			}
			row = kernelCSVRow(row[:0], k, r.Sampling != nil, stats)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() }); ok {
			f.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// kernelCSVRow appends k's fields (a sampled run's kernel's too, when
// sampled) and its statistics to row.
func kernelCSVRow(row []string, k cascade.RunKernel, sampled bool, stats []float64) []string {
	var kernelID, launch string
	if k.KernelID != nil {
		kernelID = strconv.Itoa(*k.KernelID)
	}
	if k.LaunchUID > 0 {
		launch = strconv.Itoa(k.LaunchUID)
	}
	row = append(row, strconv.Itoa(k.Seq), kernelID, cascade.Deref(k.Context), k.Name, launch,
		strconv.FormatInt(k.SimCycles, 10), strconv.FormatInt(k.SimInstructions, 10), formatFloat(k.IPC),
		optFloat(k.SimTimeNs), optFloat(k.MeasuredNs), optFloat(k.ErrorPct))
	if sampled {
		var simulated, from, full string
		if k.Simulated != nil {
			simulated = strconv.FormatBool(*k.Simulated)
		}
		if k.ProjectedFrom != nil {
			from = strconv.Itoa(*k.ProjectedFrom)
		}
		if k.FullCycles != nil {
			full = strconv.FormatInt(*k.FullCycles, 10)
		}
		row = append(row, simulated, from, full, optFloat(k.FullErrorPct))
	}
	for _, v := range stats {
		row = append(row, optFloat(present(v)))
	}
	return row
}

// formatFloat writes v in decimal (counts as whole numbers, not 2.2e+06), as briefly as reads back the same.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
