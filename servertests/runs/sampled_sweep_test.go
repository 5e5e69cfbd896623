package runs_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

// TestSampledDesignSweep: a design sweep over -gpgpu_n_clusters with a
// sampling plan and validate launches each cell as a sampled run of the
// plan with a full run of its variant beside it; the sweep's runs are
// those (not the segments). Every sampled run succeeds, and the ratio of
// the projections of two variants is the ratio of their full runs (the
// stand-in's cycles scale with the clusters exactly).
func TestSampledDesignSweep(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", nil)
	plan := planSampling(t, s)
	var out struct {
		LaunchSweep struct {
			ID         string
			SimConfigs []string
			RunCount   int
			Runs       struct {
				Nodes []struct {
					ID        string
					SimConfig struct{ Name string }
					SampledBy *struct{ ID string }
					Sampling  *struct{ ValidationRun *struct{ ID string } }
				}
			}
		}
	}
	s.MustDo(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id simConfigs runCount
		runs(first: 100) { nodes { id simConfig { name } sampledBy { id } sampling { validationRun { id } } } } } }`, map[string]any{"in": map[string]any{
		"traceIds": []string{sampledID}, "simConfigs": []string{simconfigtest.H100}, "rerun": true,
		"axes":     []map[string]any{{"option": "-gpgpu_n_clusters", "values": []string{"132", "66"}}},
		"sampling": map[string]any{"plan": plan.ID, "validate": true},
	}}, &out)
	sw := out.LaunchSweep
	if len(sw.SimConfigs) != 2 || sw.RunCount != 4 || len(sw.Runs.Nodes) != 4 {
		t.Fatalf("sweep: %+v; want 2 cells, each a sampled run and a validation run", sw)
	}
	projected := map[string]float64{}
	full := map[string]float64{}
	for _, r := range sw.Runs.Nodes {
		if r.SampledBy != nil {
			t.Errorf("segment %s is one of the sweep's runs", r.ID)
		}
		if r.Sampling == nil {
			continue
		}
		v := waitSampled(t, s, r.ID, "SUCCEEDED")
		if v.Sampling.ProjectedCycles == nil || r.Sampling.ValidationRun == nil {
			t.Fatalf("sampled run %s: %+v", r.ID, v.Sampling)
		}
		projected[r.SimConfig.Name] = *v.Sampling.ProjectedCycles
		var total float64
		for _, k := range waitFull(t, s, r.Sampling.ValidationRun.ID).Kernels {
			total += float64(*k.SimCycles)
		}
		full[r.SimConfig.Name] = total
	}
	// The design space: a cell is its sampled run (its validation run
	// counted apart), the speedup's bounds paired, and its error against
	// the full runs' speedup.
	var d struct {
		Sweep struct {
			DesignSpace struct {
				Baseline string
				Cells    []struct {
					SimConfig                        string
					Runs                             int
					Speedup, SpeedupLow, SpeedupHigh *float64
					Paired                           bool
					Significant                      *bool
					FullSpeedup, SpeedupErrorPct     *float64
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { sweep(id: $id) { designSpace { baseline cells { simConfig runs speedup speedupLow speedupHigh paired significant fullSpeedup speedupErrorPct } } } }`,
		map[string]any{"id": sw.ID}, &d)
	ds := d.Sweep.DesignSpace
	if ds.Baseline != sw.SimConfigs[0] || len(ds.Cells) != 2 {
		t.Fatalf("design space: %+v", ds)
	}
	half := ds.Cells[1]
	if half.Runs != 1 || !half.Paired || half.Significant == nil || !*half.Significant || half.SpeedupLow == nil || half.Speedup == nil ||
		*half.SpeedupLow > *half.Speedup || *half.SpeedupHigh < *half.Speedup || half.FullSpeedup == nil || half.SpeedupErrorPct == nil ||
		math.Abs(*half.SpeedupErrorPct) > 1 {
		t.Errorf("the 66-cluster cell: %+v", half)
	}
	if !t.Failed() {
		t.Logf("66-cluster cell: speedup %v [%v, %v] paired %v, full %v, error %v %%", *half.Speedup, *half.SpeedupLow, *half.SpeedupHigh, half.Paired, *half.FullSpeedup, *half.SpeedupErrorPct)
	}
	a, b := sw.SimConfigs[0], sw.SimConfigs[1]
	sampledSpeedup, fullSpeedup := projected[b]/projected[a], full[b]/full[a]
	if len(projected) != 2 || math.Abs(sampledSpeedup-fullSpeedup) > 0.01*fullSpeedup || math.Abs(fullSpeedup-2) > 0.05 {
		t.Errorf("projected %v, full %v: ratio %.4f sampled, %.4f full; want both about 2", projected, full, sampledSpeedup, fullSpeedup)
	}
}
