package results

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// correlationHeader are the columns of a statistic's figures in the
// correlation CSVs.
var correlationHeader = []string{"stat", "unit", "kernels", "pearson", "mae", "mape_pct", "aggregate_error_pct",
	"total_error_pct", "nrmse", "within_1pct", "within_10pct", "over", "under", "sim_total", "measured_total"}

// WriteCorrelationCSV writes r's [Correlator.Correlation], one row a
// statistic, the GPU warnings in the last column (empty when none).
func (co *Correlator) WriteCorrelationCSV(ctx context.Context, w io.Writer, r cascade.Run) error {
	c, err := co.Correlation(ctx, r)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.Write(append(append([]string{"run", "sim_config"}, correlationHeader...), "gpu_warnings"))
	warn := strings.Join(c.GPUWarnings, "; ")
	for _, s := range c.Stats {
		cw.Write(append(append([]string{r.ID, r.SimConfig}, figuresRow(s)...), warn))
	}
	cw.Flush()
	return cw.Error()
}

// WriteConfigCorrelationCSV writes the trace's [Correlator.ConfigCorrelation]:
// a row for each statistic under each config that has a figure of it,
// statistics in its order, configs in name order; best says whether the
// config is the statistic's best, best_overall whether it is the best
// over all; sampled whether the config's run is a sampled run (one
// stands for its config only when the config has no other succeeded run).
func (co *Correlator) WriteConfigCorrelationCSV(ctx context.Context, w io.Writer, traceID string) error {
	c, err := co.ConfigCorrelation(ctx, traceID)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	head := append([]string{"sim_config", "run", "sampled"}, correlationHeader...)
	cw.Write(append(head, "ranked_by", "best", "best_overall", "gpu_warnings"))
	for _, st := range c.Stats {
		for i, s := range st.Configs {
			if s == nil {
				continue
			}
			cfg := c.SimConfigs[i]
			row := append([]string{cfg, c.Runs[i].ID, strconv.FormatBool(c.Runs[i].Sampling != nil)}, figuresRow(*s)...)
			row = append(row, st.Figure, strconv.FormatBool(st.Best != nil && *st.Best == cfg),
				strconv.FormatBool(c.Best != nil && *c.Best == cfg), strings.Join(c.GPUWarnings[i], "; "))
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCounterPairsCSV writes every pair of r ([Correlator.CounterPairs]),
// kernel by kernel in launch order and statistic by statistic, with the
// ratio of simulated to measured that the correlator's kernel.raw.csv
// gives (empty when measured is 0). w is flushed after each page of
// kernels when it can be.
func (co *Correlator) WriteCounterPairsCSV(ctx context.Context, w io.Writer, r cascade.Run) error {
	t, err := co.rd.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return err
	}
	cols := runs.StatColumns(r)
	cw := csv.NewWriter(w)
	cw.Write([]string{"seq", "kernel_id", "context", "name", "stat", "simulated", "measured", "measured_min", "measured_max",
		"measurements", "sim_over_measured", "error_pct", "representative"})
	n := 0
	err = co.eachPair(ctx, r, t, -1, func(_, col int, p cascade.CounterPair) bool {
		ratio := ""
		if p.Measured != 0 {
			ratio = formatFloat(p.Simulated / p.Measured)
		}
		cw.Write([]string{strconv.Itoa(p.Seq), strconv.Itoa(p.KernelID), cascade.Deref(p.Context), p.Name, cols[col].Name,
			formatFloat(p.Simulated), formatFloat(p.Measured), formatFloat(p.MeasuredMin), formatFloat(p.MeasuredMax),
			strconv.Itoa(p.Measurements), ratio, optFloat(p.ErrorPct), optBool(p.Representative)})
		if n++; n%cascade.MaxPageSize == 0 {
			cw.Flush()
			if f, ok := w.(interface{ Flush() }); ok {
				f.Flush()
			}
		}
		return cw.Error() == nil && ctx.Err() == nil
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// figuresRow is s's figures in correlationHeader's order.
func figuresRow(s cascade.StatCorrelation) []string {
	return []string{s.Stat, s.Unit, strconv.Itoa(s.Kernels), optFloat(s.Pearson), formatFloat(s.MAE), optFloat(s.MAPE),
		optFloat(s.AggregateErrorPct), optFloat(s.TotalErrorPct), optFloat(s.NRMSE), strconv.Itoa(s.Within1Pct),
		strconv.Itoa(s.Within10Pct), strconv.Itoa(s.Over), strconv.Itoa(s.Under), formatFloat(s.SimTotal), formatFloat(s.MeasuredTotal)}
}
