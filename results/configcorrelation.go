package results

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
)

// ConfigCorrelation correlates the run of each config that
// [Reader.ConfigComparison] stands by (its latest succeeded run, a full
// one before a sampled one) with the trace's hardware counters, statistic
// by statistic, and ranks the configs: per statistic by the figure the
// correlator's legend gives ([cascade.ConfigStatCorrelation]), overall by
// the mean rank. Statistics are in the order the configs' runs first give
// them.
func (co *Correlator) ConfigCorrelation(ctx context.Context, traceID string) (cascade.ConfigCorrelation, error) {
	cs, err := co.rd.configRuns(ctx, traceID)
	if err != nil {
		return cascade.ConfigCorrelation{}, err
	}
	out := cascade.ConfigCorrelation{
		SimConfigs: make([]string, len(cs)), Runs: make([]*cascade.Run, len(cs)),
		Stats: []cascade.ConfigStatCorrelation{}, GPUWarnings: make([][]string, len(cs)),
	}
	at := map[string]int{} // statistic → its index in out.Stats
	for i, c := range cs {
		out.SimConfigs[i], out.Runs[i], out.GPUWarnings[i] = c.SimConfig, c.Run, []string{}
		if c.Run == nil {
			continue
		}
		rc, err := co.Correlation(ctx, *c.Run)
		if err != nil {
			return cascade.ConfigCorrelation{}, fmt.Errorf("correlation of %s under %s: %w", traceID, c.SimConfig, err)
		}
		out.GPUWarnings[i] = rc.GPUWarnings
		for _, s := range rc.Stats {
			j, ok := at[s.Stat]
			if !ok {
				j = len(out.Stats)
				at[s.Stat] = j
				out.Stats = append(out.Stats, cascade.ConfigStatCorrelation{Stat: s.Stat, Unit: s.Unit, Configs: make([]*cascade.StatCorrelation, len(cs))})
			}
			out.Stats[j].Configs[i] = &s
		}
	}
	out.Best = rank(out.SimConfigs, out.Stats)
	for i := range out.Stats {
		out.Stats[i].Figure = rankFigure(out.Stats[i].Stat)
	}
	return out, nil
}
