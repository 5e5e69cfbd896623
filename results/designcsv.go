package results

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
)

// designCSVColumns are the columns of a sweep's design-space CSV; the
// axes' columns come after base.
var designCSVColumns = []string{"scope", "config", "base", "kernel", "trace_id", "step", "runs", "succeeded", "sampled",
	"cycles", "time_ns", "time_low_ns", "time_high_ns", "speedup", "speedup_low", "speedup_high",
	"significant", "full_speedup", "speedup_error_pct", "energy_j", "avg_power_w", "insts_per_joule", "baseline"}

// WriteDesignCSV writes a sweep's design space (see [Reader.DesignSpace])
// to w as CSV, one tidy table a notebook reads as it is: one row per cell
// (scope "cell"), then one per kernel name and cell (scope "kernel"),
// then one per model step and cell (scope "step"). Each axis is a column
// of its own after base, named by its option without the dash
// ("gpgpu_n_clusters"), or "modifier" ("modifier_2", ...) for an axis of
// modifiers; a figure a row has not is an empty field. baseline is the
// cell the speedups are against, "" for the default; the baseline's rows
// say true in baseline.
func (m *Reader) WriteDesignCSV(ctx context.Context, w io.Writer, sweepID, baseline string) error {
	ds, err := m.DesignSpace(ctx, sweepID, baseline)
	if err != nil {
		return err
	}
	header := slices.Clone(designCSVColumns[:3])
	mods := 0
	for _, a := range ds.Axes {
		name := strings.TrimLeft(a.Option, "-")
		if a.Option == "" {
			if mods++; mods > 1 {
				name = fmt.Sprintf("modifier_%d", mods)
			} else {
				name = "modifier"
			}
		}
		for slices.Contains(header, name) || slices.Contains(designCSVColumns, name) {
			name = "axis_" + name
		}
		header = append(header, name)
	}
	header = append(header, designCSVColumns[3:]...)
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	row := func(scope string, c cascade.DesignCell, kernel, trace, step string, fig ...string) error {
		out := append([]string{scope, c.SimConfig, c.Base}, c.Values...)
		out = append(out, kernel, trace, step)
		out = append(out, fig...)
		return cw.Write(append(out, strconv.FormatBool(c.SimConfig == ds.Baseline)))
	}
	blank := []string{"", "", "", ""}            // runs, succeeded, sampled, cycles
	cellOnly := []string{"", "", "", "", "", ""} // significant ... insts_per_joule
	for _, c := range ds.Cells {
		if err := row("cell", c, "", "", "", strconv.Itoa(c.Runs), strconv.Itoa(c.Succeeded), strconv.Itoa(c.Sampled), optFloat(c.Cycles),
			optFloat(c.TimeNs), optFloat(c.TimeLowNs), optFloat(c.TimeHighNs), optFloat(c.Speedup), optFloat(c.SpeedupLow), optFloat(c.SpeedupHigh),
			optBool(c.Significant), optFloat(c.FullSpeedup), optFloat(c.SpeedupErrorPct), optFloat(c.EnergyJ), optFloat(c.AvgPowerW), optFloat(c.InstsPerJoule)); err != nil {
			return err
		}
	}
	for _, k := range ds.Kernels {
		for i, c := range ds.Cells {
			if k.TimeNs[i] == nil {
				continue
			}
			if err := row("kernel", c, k.Name, "", "", append(append(blank, optFloat(k.TimeNs[i]), "", "", optFloat(k.Speedup[i]), "", ""), cellOnly...)...); err != nil {
				return err
			}
		}
	}
	for _, st := range ds.Steps {
		for i, c := range ds.Cells {
			if st.TimeNs[i] == nil {
				continue
			}
			if err := row("step", c, "", st.TraceID, strconv.Itoa(st.Step), append(append(blank, optFloat(st.TimeNs[i]), "", "", optFloat(st.Speedup[i]), "", ""), cellOnly...)...); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// optBool is b, or "" for nil.
func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}
