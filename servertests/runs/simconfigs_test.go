package runs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

// TestRunOfARemovedConfig: a run whose config left the configs directory
// still shows it, by name, with an error saying so, and is not counted
// cross-architecture.
func TestRunOfARemovedConfig(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
	query := `query($id: ID!) { run(id: $id) { simConfig { name computeCapability error } crossArchitecture } }`
	type result struct {
		Run struct {
			SimConfig struct {
				Name, ComputeCapability string
				Error                   *string
			}
			CrossArchitecture bool
		}
	}
	var before result
	s.MustDo(t, query, map[string]any{"id": r.ID}, &before)
	if c := before.Run.SimConfig; c.Name != simconfigtest.H100 || c.ComputeCapability != "9.0" || c.Error != nil {
		t.Fatalf("before: %+v", before)
	}

	dir := s.Config.SimConfigsDir
	if err := os.Rename(filepath.Join(dir, simconfigtest.H100), filepath.Join(dir, ".gone")); err != nil {
		t.Fatal(err)
	}
	var after result
	s.MustDo(t, query, map[string]any{"id": r.ID}, &after)
	c := after.Run.SimConfig
	if c.Name != simconfigtest.H100 || c.ComputeCapability != "" || cascadeDeref(c.Error) != "no longer in CASCADE_SIM_CONFIGS_DIR ("+dir+")" || after.Run.CrossArchitecture {
		t.Errorf("after: %+v (error %q)", after, cascadeDeref(c.Error))
	}
}
