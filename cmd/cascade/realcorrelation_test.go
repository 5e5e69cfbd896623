package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// vecAddMeasured is what testdata/vecadd-profiles (made up, in nvprof's
// exact format, for vecAdd on its GTX 1080) measured, as the statistics
// accelsim/hwprofile/mappings.txt makes of its counters.
var vecAddMeasured = map[string]float64{
	"cycles":               8416 * 1607.0 / 1000, // Duration 8.416 us at the GTX 1080's 1607 MHz
	"warp_instructions":    72104,                // inst_issued
	"dram_reads":           50112,
	"dram_writes":          25008,
	"l2_read_accesses":     50000,
	"l2_read_hits":         50000 * 49.87 / 100,
	"l2_read_hit_rate":     0.4987,
	"l2_write_accesses":    25000,
	"l2_write_hits":        25000,
	"l2_write_hit_rate":    1,
	"l1d_read_accesses":    50000, // gld_transactions
	"l1d_write_accesses":   25000, // gst_transactions
	"l1d_read_hit_rate":    0,     // global_hit_rate
	"occupancy":            87.3215,
	"shmem_bank_conflicts": 0,
}

// withProfiles is a copy of the trace directory src whose metadata.json
// names the vecAdd profiles of testdata/vecadd-profiles, copied beside it.
func withProfiles(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	names := []string{"profiles/nvprof-gpu-trace.csv", "profiles/nvprof-metrics.csv"}
	for _, n := range names {
		testkit.CopyFile(t, filepath.Join("testdata", "vecadd-profiles", filepath.Base(n)), filepath.Join(dir, n))
	}
	path := filepath.Join(dir, "metadata.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	meta["profiles"] = names
	if b, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type realStat struct {
	Statistic               string
	Kernels                 int
	Pearson, MapePct        *float64
	TotalErrorPct           *float64
	Within1Pct, Over, Under int
	FurthestOff             []struct {
		Simulated, Measured float64
		Measurements        int
		ErrorPct            *float64
	}
}

// checkCorrelation checks the correlation of each config's vecAdd run
// (ids by config, each a realRun as the API gave it) against the made-up
// profiles: every statistic both the run and a profile have is paired,
// once, its measured value as the mapping computes it from the profile,
// its simulated value the run's, its figures those of one pair; each
// config is said to model another GPU than the profiles'; the configs
// are ranked.
func checkCorrelation(t *testing.T, addr string, runs map[string]realRun) {
	t.Helper()
	var tr struct {
		Trace struct {
			Profiles []struct {
				Matched    int
				Statistics []string
				Error      *string
			}
			ConfigCorrelation struct {
				SimConfigs []string
				Statistics []struct {
					Statistic string
					Configs   []*struct{ Kernels int }
					Best      *string
				}
				Best *string
			}
		}
	}
	if errs := gqlVars(t, addr, `{ trace(id: "vecadd") { profiles { matched statistics error }
		configCorrelation { simConfigs statistics { statistic configs { kernels } best } best } } }`, nil, &tr); len(errs) > 0 {
		t.Fatal(errs)
	}
	profiled := map[string]bool{}
	for _, p := range tr.Trace.Profiles {
		if p.Error != nil || p.Matched != 1 {
			t.Errorf("profile: matched %d, error %v; want the one vecAdd launch matched", p.Matched, p.Error)
		}
		for _, s := range p.Statistics {
			profiled[s] = true
		}
	}
	for config, r := range runs {
		var got struct {
			Run struct {
				Correlation struct {
					Statistics  []realStat
					GpuWarnings []string
				}
			}
		}
		if errs := gqlVars(t, addr, `query($id: ID!) { run(id: $id) { correlation { statistics { statistic kernels pearson mapePct totalErrorPct
			within1Pct over under furthestOff { simulated measured measurements errorPct } } gpuWarnings } } }`,
			map[string]any{"id": r.ID}, &got); len(errs) > 0 {
			t.Fatal(errs)
		}
		var want, have []string
		for i, c := range r.StatCounters {
			if v := r.Kernels[0].StatValues[i]; v != nil && profiled[c.Name] {
				want = append(want, c.Name)
			}
		}
		for _, s := range got.Run.Correlation.Statistics {
			have = append(have, s.Statistic)
			sim := simValue(r, s.Statistic)
			meas, ok := vecAddMeasured[s.Statistic]
			if !ok || s.Kernels != 1 || len(s.FurthestOff) != 1 || s.Pearson != nil {
				t.Errorf("%s %s: %+v, want one pair and no correlation coefficient", config, s.Statistic, s)
				continue
			}
			p := s.FurthestOff[0]
			t.Logf("%s %s: simulated %v, measured %v, error %v %%", config, s.Statistic, p.Simulated, p.Measured, deref(p.ErrorPct))
			if p.Simulated != sim || math.Abs(p.Measured-meas) > 1e-9*math.Max(1, meas) || p.Measurements != 1 {
				t.Errorf("%s %s: pair (%v, %v) of %d measurements, want (%v, %v) of 1", config, s.Statistic, p.Simulated, p.Measured, p.Measurements, sim, meas)
			}
			if meas != 0 {
				e := 100 * (sim - meas) / meas
				if s.MapePct == nil || math.Abs(*s.MapePct-math.Abs(e)) > 1e-6 || s.TotalErrorPct == nil || math.Abs(*s.TotalErrorPct-e) > 1e-6 {
					t.Errorf("%s %s: MAPE %v, total error %v; want %v", config, s.Statistic, deref(s.MapePct), deref(s.TotalErrorPct), e)
				}
			}
			if (sim > meas) != (s.Over == 1) || (sim < meas) != (s.Under == 1) {
				t.Errorf("%s %s: over %d under %d for (%v, %v)", config, s.Statistic, s.Over, s.Under, sim, meas)
			}
		}
		if !slices.Equal(have, want) || len(want) < 8 {
			t.Errorf("%s: correlated %v, want every statistic the run and a profile have: %v", config, have, want)
		}
		wantWarn := map[string]string{"SM6_TITANX": "models a TITAN X (Pascal)", "SM7_QV100": "models sm_70"}[config]
		if w := got.Run.Correlation.GpuWarnings; len(w) != 2 || !strings.Contains(w[0], "measured on GeForce GTX 1080 (sm_61)") || !strings.Contains(w[0], wantWarn) {
			t.Errorf("%s: GPU warnings %q, want each profile's to say the config %s", config, w, wantWarn)
		}
	}
	cc := tr.Trace.ConfigCorrelation
	if !slices.Equal(cc.SimConfigs, []string{"SM6_TITANX", "SM7_QV100"}) || cc.Best == nil || len(cc.Statistics) < 8 {
		t.Fatalf("config correlation: %+v", cc)
	}
	for _, s := range cc.Statistics {
		if len(s.Configs) != 2 {
			t.Errorf("config correlation of %s: %d configs", s.Statistic, len(s.Configs))
			continue
		}
		for i, config := range cc.SimConfigs {
			// SM6_TITANX's loads skip the L1D: it has no L1D statistics.
			if has := !math.IsNaN(simValue(runs[config], s.Statistic)); (s.Configs[i] != nil) != has || (has && s.Configs[i].Kernels != 1) {
				t.Errorf("config correlation of %s under %s: %+v, want a pair: %v", s.Statistic, config, s.Configs[i], has)
			}
		}
	}
}

// simValue is r's value of the statistic name, NaN when absent.
func simValue(r realRun, name string) float64 {
	for i, c := range r.StatCounters {
		if c.Name == name {
			return deref(r.Kernels[0].StatValues[i])
		}
	}
	return math.NaN()
}
