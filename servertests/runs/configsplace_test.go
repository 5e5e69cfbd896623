package runs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/accelsimtest"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestRemovedConfigOfACheckout: with the configs of an Accel-Sim
// checkout (CASCADE_ACCELSIM_DIR alone), a run whose config left them
// said "no longer in CASCADE_SIM_CONFIGS_DIR", a variable the user never
// set; it names CASCADE_ACCELSIM_DIR and the folder.
func TestRemovedConfigOfACheckout(t *testing.T) {
	t.Parallel()
	checkout := accelsimtest.Write(t, t.TempDir(), fakesim.Version2)
	gpgpu := filepath.Join(checkout, filepath.FromSlash(accelsim.GPGPUSimConfigsPath))
	trace := filepath.Join(checkout, filepath.FromSlash(accelsim.TraceConfigsPath))
	s := server(t, "ok", func(c *app.Config) { c.SimConfigsDir, c.SimTraceConfigsDir = gpgpu, trace })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
	for _, dir := range []string{gpgpu, trace} {
		if err := os.Rename(filepath.Join(dir, simconfigtest.H100), filepath.Join(dir, ".gone")); err != nil {
			t.Fatal(err)
		}
	}
	var after struct {
		Run struct{ SimConfig struct{ Error *string } }
	}
	s.MustDo(t, `query($id: ID!) { run(id: $id) { simConfig { error } } }`, map[string]any{"id": r.ID}, &after)
	want := "no longer among the tested configs of CASCADE_ACCELSIM_DIR's checkout (" + gpgpu + ")"
	if got := cascadeDeref(after.Run.SimConfig.Error); got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}
