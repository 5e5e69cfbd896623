package results

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

func TestRankTiesHaveNoBest(t *testing.T) {
	f := func(v float64) *cascade.StatCorrelation { return &cascade.StatCorrelation{MAPE: &v, NRMSE: &v} }
	configs := []string{"A", "B", "C"}
	stats := []cascade.ConfigStatCorrelation{
		{Stat: "cycles", Configs: []*cascade.StatCorrelation{f(90), f(6), f(50)}},  // B, C, A
		{Stat: "dram_reads", Configs: []*cascade.StatCorrelation{f(1), f(1), nil}}, // A = B, C last
		{Stat: "l2_read_hits", Configs: []*cascade.StatCorrelation{f(2), f(2), f(2)}},
	}
	best := rank(configs, stats)
	if stats[0].Best == nil || *stats[0].Best != "B" {
		t.Errorf("cycles' best = %v, want B", stats[0].Best)
	}
	for _, st := range stats[1:] {
		if st.Best != nil {
			t.Errorf("%s's best = %s, want none: the least figure is shared", st.Stat, *st.Best)
		}
	}
	// Mean ranks: A 3 + 1.5 + 2, B 1 + 1.5 + 2, C 2 + 3 + 2.
	if best == nil || *best != "B" {
		t.Errorf("best = %v, want B", best)
	}

	// Statistics that cannot tell two configs apart name no best over all.
	tied := []cascade.ConfigStatCorrelation{{Stat: "dram_reads", Configs: []*cascade.StatCorrelation{f(1), f(1)}}}
	if b := rank(configs[:2], tied); b != nil {
		t.Errorf("best of a tie = %s, want none", *b)
	}
	// Opposite rankings on two statistics: a shared mean rank, no best.
	opposite := []cascade.ConfigStatCorrelation{
		{Stat: "cycles", Configs: []*cascade.StatCorrelation{f(1), f(2)}},
		{Stat: "dram_reads", Configs: []*cascade.StatCorrelation{f(2), f(1)}},
	}
	if b := rank(configs[:2], opposite); b != nil {
		t.Errorf("best of opposite rankings = %s, want none", *b)
	}
}
