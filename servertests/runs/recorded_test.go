package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/db"
)

// recordedRun is what a run's page shows of its results and config.
type recordedRun struct {
	run
	SimConfig struct {
		Name  string
		Error *string
	}
	Figures        struct{ CoreClockMHz *float64 }
	TimingProblems []string
}

func getRecorded(t *testing.T, s interface {
	MustDo(testing.TB, string, map[string]any, any)
}, id string) recordedRun {
	t.Helper()
	var r struct{ Run recordedRun }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+runFields+` simConfig { name error } figures { coreClockMHz } timingProblems } }`, map[string]any{"id": id}, &r)
	return r.Run
}

// TestResultsSurviveConfigChange: a finished run's results are its own:
// after a restart with another configs directory, which no longer has the
// run's config, its simulated times, comparison and steps are those it
// had, and its config says it is gone.
func TestResultsSurviveConfigChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := server(t, "ok", func(c *app.Config) { c.DataDir = dir })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	if got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED"); got.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", got.State, got.Error)
	}
	before := getRecorded(t, s, r.ID)
	if before.Comparison == nil || len(before.Steps) == 0 || before.SimConfig.Error != nil {
		t.Fatalf("before: %+v", before)
	}
	if c := before.Figures.CoreClockMHz; c == nil || *c != 1755 {
		t.Errorf("recorded core clock %v, want 1755", c)
	}
	s.Close()

	others := simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100)
	s2 := server(t, "ok", func(c *app.Config) { c.DataDir = dir; c.SimConfigsDir = others })
	after := getRecorded(t, s2, r.ID)
	if after.SimConfig.Name != simconfigtest.H100 || after.SimConfig.Error == nil || !strings.Contains(*after.SimConfig.Error, "no longer") {
		t.Errorf("config after: %+v", after.SimConfig)
	}
	if a, b := after.Comparison, before.Comparison; a == nil || a.Mape != b.Mape || a.SimTotalNs != b.SimTotalNs || a.KernelsCompared != b.KernelsCompared || a.Correlation == nil || *a.Correlation != *b.Correlation {
		t.Errorf("comparison after %+v, before %+v", after.Comparison, before.Comparison)
	}
	if len(after.Kernels) != len(before.Kernels) {
		t.Fatalf("kernels after %+v, before %+v", after.Kernels, before.Kernels)
	}
	for i, k := range after.Kernels {
		if k.SimTimeNs == nil || *k.SimTimeNs != *before.Kernels[i].SimTimeNs || *k.ErrorPct != *before.Kernels[i].ErrorPct {
			t.Errorf("kernel %d after %+v, before %+v", i, k, before.Kernels[i])
		}
	}
	if len(after.Steps) != len(before.Steps) {
		t.Fatalf("steps after %+v, before %+v", after.Steps, before.Steps)
	}
	for i, st := range after.Steps {
		if st != before.Steps[i] {
			t.Errorf("step %d after %+v, before %+v", i, st, before.Steps[i])
		}
	}
}

// TestOldRunWithoutClock: a run from before core clocks were recorded,
// whose config is gone, has no simulated times, so no comparison and no
// projected steps, and its timing problems say why; its kernels' cycles
// are still there.
func TestOldRunWithoutClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := server(t, "ok", func(c *app.Config) { c.DataDir = dir })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	if got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED"); got.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", got.State, got.Error)
	}
	s.Close()
	// As it was stored before clocks were recorded.
	d, err := db.Open(context.Background(), db.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.UpdateRun(context.Background(), r.ID, func(r *cascade.Run) error {
		r.Figures.CoreClockMHz = 0
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	others := simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100)
	s2 := server(t, "ok", func(c *app.Config) { c.DataDir = dir; c.SimConfigsDir = others })
	got := getRecorded(t, s2, r.ID)
	if got.Figures.CoreClockMHz != nil || got.Comparison != nil || len(got.Steps) != 0 || len(got.Kernels) != 4 {
		t.Fatalf("old run: %+v", got)
	}
	for _, k := range got.Kernels {
		if k.SimCycles == nil || k.SimTimeNs != nil || k.ErrorPct != nil {
			t.Errorf("kernel %+v: cycles and no simulated time", k)
		}
	}
	problems := strings.Join(got.TimingProblems, "\n")
	for _, w := range []string{"core clock was not recorded", "SM90_H100 is no longer in CASCADE_SIM_CONFIGS_DIR", "2 of 2 steps not projected"} {
		if !strings.Contains(problems, w) {
			t.Errorf("timing problems do not say %q:\n%s", w, problems)
		}
	}
}

// TestClockRecordedAsTheRunStarts: a run queued while its config's core
// clock is edited records the clock it starts under; a run that ran
// before keeps the one it ran at.
func TestClockRecordedAsTheRunStarts(t *testing.T) {
	t.Parallel()
	cfgs := simconfigtest.Write(t, t.TempDir(), simconfigtest.H100)
	hold, release := held(t)
	s := server(t, "ok", hold, func(c *app.Config) { c.SimConfigsDir = cfgs })
	a := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, a.ID, "RUNNING")
	b := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	path := filepath.Join(cfgs, simconfigtest.H100, "gpgpusim.config")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(text), "-gpgpu_clock_domains 1755.0:", "-gpgpu_clock_domains 1000.0:", 1)
	if edited == string(text) {
		t.Fatal("no clock to edit")
	}
	simconfigtest.WriteFile(t, path, edited)
	release()
	for id, mhz := range map[string]float64{a.ID: 1755, b.ID: 1000} {
		waitRun(t, s, id, "SUCCEEDED")
		got := getRecorded(t, s, id)
		if c := got.Figures.CoreClockMHz; c == nil || *c != mhz {
			t.Errorf("run %s: clock %v, want %v", id, cascade.Deref(c), mhz)
		}
		if k := got.Kernels[0]; k.SimTimeNs == nil || *k.SimTimeNs != float64(*k.SimCycles)*1000/mhz {
			t.Errorf("run %s: kernel %+v, want its cycles at %v MHz", id, k, mhz)
		}
	}
}
