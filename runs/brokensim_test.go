package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
)

// newBrokenSimRig is a Manager over the sample configs and variantsYML
// whose simulator command names a file that is not there.
func newBrokenSimRig(t *testing.T) (*managerRig, string) {
	t.Helper()
	r := newManagerRig(t, 1)
	dir := t.TempDir()
	yml := filepath.Join(dir, "define-standard-cfgs.yml")
	simconfigtest.WriteFile(t, yml, variantsYML)
	missing := filepath.Join(dir, "no-such-accel-sim.out")
	r.m = runs.New(runs.Config{
		BucketDir: r.bucket, WorkDir: t.TempDir(), ConfigsDir: simconfigtest.Write(t, t.TempDir()), ModifiersFile: yml,
		NewExecutor: func(h runs.Host) runs.Executor { r.exec.host = h; return r.exec },
		Store:       r.d, Events: r.events, Probe: simprobeSim(missing),
	})
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("the simulator is there")
	}
	return r, missing
}

// TestSimulatorThatCannotRun: a variant the simulator cannot be asked
// about, as its command is not there, is refused naming the field and
// the config, saying why, by launchRun and by launchSweep alike; a
// sweep says so beside its other problems (a config name that is not
// known), not only once those are fixed. Nothing is stored.
func TestSimulatorThatCannotRun(t *testing.T) {
	t.Parallel()
	r, missing := newBrokenSimRig(t)
	ctx := context.Background()
	says := "SM90_H100-64SM: the simulator cannot be run to check it: run " + missing
	_, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: quickstartID, SimConfig: "H100-64SM"})
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.HasPrefix(cascade.ErrorMessage(err), "simConfig: "+says) {
		t.Errorf("launchRun: %v; want BAD_USER_INPUT %q", err, "simConfig: "+says)
	}
	_, err = runs.NewSweeps(r.m).LaunchSweep(ctx, runs.SweepInput{TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100-64SM", "NOPE"}})
	msg := cascade.ErrorMessage(err)
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(msg, "(2 problems)") ||
		!strings.Contains(msg, "simConfigs[0]: "+says) || !strings.Contains(msg, `simConfigs[1]: no config "NOPE"`) {
		t.Errorf("launchSweep: %v; want BAD_USER_INPUT naming simConfigs[0]: %q and simConfigs[1]'s unknown name", err, says)
	}
	if all, err := r.d.TraceRuns(ctx, quickstartID); err != nil || len(all) != 0 {
		t.Errorf("runs stored: %d, %v", len(all), err)
	}
}
