package runs_test

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

// TestWallEstimateConfig: wallEstimate names config when it is not one of
// the server's (it answered null, as for a config without measured runs),
// and a config without runs still answers null.
func TestWallEstimateConfig(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"})
	plan := planSampling(t, s)
	q := `query($id: ID!, $c: String!) { samplingPlan(id: $id) { wallEstimate(config: $c) { seconds } } }`
	errs := s.Do(t, q, map[string]any{"id": plan.ID, "c": "NOPE"}, nil)
	if len(errs) == 0 || !strings.HasPrefix(errs[0].Message, `config: no config "NOPE" (have `) || errs[0].Extensions["code"] != "BAD_USER_INPUT" {
		t.Errorf("wallEstimate(config: NOPE): errors %+v, want BAD_USER_INPUT naming config", errs)
	}
	var r struct {
		SamplingPlan struct{ WallEstimate *struct{ Seconds float64 } }
	}
	s.MustDo(t, q, map[string]any{"id": plan.ID, "c": simconfigtest.H100}, &r)
	if r.SamplingPlan.WallEstimate != nil {
		t.Errorf("a config without runs: %+v, want null", r.SamplingPlan.WallEstimate)
	}
}
