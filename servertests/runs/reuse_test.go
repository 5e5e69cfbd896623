package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

type reusedRun struct {
	ID       string
	State    string
	History  []string
	SameAs   *struct{ ID string }
	Progress struct{ KernelsDone, KernelsTotal int }
	Kernels  []struct{ SimCycles int64 }
	Figures  struct {
		CoreClockMHz                      *float64
		WallSeconds                       *float64
		PeakRssBytes                      *int64
		SimCycles                         *int64
		SimulatorSum, ConfigSum, TraceSum *string
	}
}

const reusedFields = `id state history sameAs { id } progress { kernelsDone kernelsTotal } kernels { simCycles }
	figures { coreClockMHz wallSeconds peakRssBytes simCycles simulatorSum configSum traceSum }`

func launchReused(t *testing.T, s interface {
	MustDo(t testing.TB, query string, vars map[string]any, out any)
}, in map[string]any) reusedRun {
	t.Helper()
	var r struct{ LaunchRun reusedRun }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+reusedFields+` } }`, map[string]any{"in": in}, &r)
	return r.LaunchRun
}

// TestLaunchReusesASucceededRun: a run records its figures when it starts
// and ends; launching the same simulation again (same trace, config
// files, simulator, kernels) makes a run SUCCEEDED at once, sameAs the
// first, with its results, unless rerun; a subset, or an edited config
// file, is another simulation.
func TestLaunchReusesASucceededRun(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	in := map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100}
	first := launch(t, s, in)
	waitRun(t, s, first.ID, "SUCCEEDED")
	var got struct{ Run reusedRun }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+reusedFields+` } }`, map[string]any{"id": first.ID}, &got)
	f := got.Run.Figures
	for name, v := range map[string]*string{"simulatorSum": f.SimulatorSum, "configSum": f.ConfigSum, "traceSum": f.TraceSum} {
		if v == nil || len(*v) != 64 {
			t.Errorf("%s = %v, want a SHA-256", name, v)
		}
	}
	if f.CoreClockMHz == nil || *f.CoreClockMHz != 1755 || f.WallSeconds == nil || f.PeakRssBytes == nil || *f.PeakRssBytes <= 0 {
		t.Errorf("figures %+v: want the core clock, the wall time and the peak memory", f)
	}
	if got.Run.SameAs != nil {
		t.Errorf("a simulated run is sameAs %v", got.Run.SameAs)
	}
	var cycles int64
	for _, k := range got.Run.Kernels {
		cycles += k.SimCycles
	}
	if f.SimCycles == nil || *f.SimCycles != cycles || cycles <= 0 {
		t.Errorf("simCycles = %v; want the total of its %d kernels' cycles, %d", f.SimCycles, len(got.Run.Kernels), cycles)
	}

	again := launchReused(t, s, in)
	if again.ID == first.ID || again.State != "SUCCEEDED" || again.SameAs == nil || again.SameAs.ID != first.ID {
		t.Fatalf("launch again = %+v; want a new run, SUCCEEDED, sameAs %s", again, first.ID)
	}
	if len(again.Kernels) != 4 || again.Kernels[0].SimCycles != got.Run.Kernels[0].SimCycles || again.Progress.KernelsDone != 4 ||
		*again.Figures.TraceSum != *f.TraceSum || again.Figures.PeakRssBytes == nil {
		t.Errorf("the reused run's results: %+v; want the first's %+v", again, got.Run)
	}
	if again.Figures.SimCycles == nil || *again.Figures.SimCycles != cycles {
		t.Errorf("the reused run's simCycles = %v; want the first's, %d", again.Figures.SimCycles, cycles)
	}
	if len(again.History) != 1 || !strings.Contains(again.History[0], "not simulated: run "+first.ID) {
		t.Errorf("history %q", again.History)
	}

	rerun := launchReused(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100, "rerun": true})
	if rerun.SameAs != nil || rerun.State == "SUCCEEDED" {
		t.Fatalf("rerun = %+v; want a queued simulation", rerun)
	}
	waitRun(t, s, rerun.ID, "SUCCEEDED")

	subset := launchReused(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100, "kernelIds": []int{1}})
	if subset.SameAs != nil {
		t.Errorf("a subset reused run %s", subset.SameAs.ID)
	}
	waitRun(t, s, subset.ID, "SUCCEEDED")

	cfg := filepath.Join(s.Config.SimConfigsDir, simconfigtest.H100, simconfig.GPGPUSimFile)
	file, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	file.WriteString("# edited\n")
	file.Close()
	edited := launchReused(t, s, in)
	if edited.SameAs != nil {
		t.Errorf("a run under an edited config reused run %s", edited.SameAs.ID)
	}
	waitRun(t, s, edited.ID, "SUCCEEDED")
}

// TestSweepReusesSucceededRuns: a sweep's run whose simulation a
// succeeded run did is SUCCEEDED from the start, sameAs that run; the
// others, and every run of a sweep with rerun, are simulated.
func TestSweepReusesSucceededRuns(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	first := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, first.ID, "SUCCEEDED")
	sweepRuns := func(rerun bool) map[string]reusedRun {
		t.Helper()
		var l struct{ LaunchSweep struct{ ID string } }
		s.MustDo(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }`, map[string]any{"in": map[string]any{
			"traceIds": []string{quickstartID}, "simConfigs": []string{simconfigtest.H100, simconfigtest.QV100}, "rerun": rerun}}, &l)
		var q struct {
			Sweep struct {
				Runs struct {
					Nodes []struct {
						reusedRun
						SimConfig struct{ Name string }
					}
				}
			}
		}
		s.MustDo(t, `query($id: ID!) { sweep(id: $id) { runs { nodes { simConfig { name } `+reusedFields+` } } } }`,
			map[string]any{"id": l.LaunchSweep.ID}, &q)
		out := map[string]reusedRun{}
		for _, n := range q.Sweep.Runs.Nodes {
			out[n.SimConfig.Name] = n.reusedRun
		}
		for _, r := range out {
			waitRun(t, s, r.ID, "SUCCEEDED")
		}
		return out
	}
	rs := sweepRuns(false)
	if r := rs[simconfigtest.H100]; r.SameAs == nil || r.SameAs.ID != first.ID || r.State != "SUCCEEDED" || len(r.Kernels) != 4 {
		t.Errorf("the sweep's %s run: %+v; want SUCCEEDED at once, sameAs %s, with its kernels", simconfigtest.H100, r, first.ID)
	}
	if r := rs[simconfigtest.QV100]; r.SameAs != nil {
		t.Errorf("the sweep's %s run reused %s", simconfigtest.QV100, r.SameAs.ID)
	}
	for name, r := range sweepRuns(true) {
		if r.SameAs != nil {
			t.Errorf("a rerun sweep's %s run reused %s", name, r.SameAs.ID)
		}
	}
}

// TestRunSaysWhenItsTraceChanged: a run's figures say whether the trace's
// processed files are still those it simulated (traceCurrent): true until
// the trace is post-processed again, false after.
func TestRunSaysWhenItsTraceChanged(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	run := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, run.ID, "SUCCEEDED")
	current := func() *bool {
		var r struct {
			Run struct{ Figures struct{ TraceCurrent *bool } }
		}
		s.MustDo(t, `query($id: ID!) { run(id: $id) { figures { traceCurrent } } }`, map[string]any{"id": run.ID}, &r)
		return r.Run.Figures.TraceCurrent
	}
	if c := current(); c == nil || !*c {
		t.Fatalf("traceCurrent = %v before the trace changed, want true", c)
	}
	// What post-processing again leaves: the kernel traces and then the
	// kernel list written anew.
	later := time.Now().Add(time.Minute)
	for _, f := range []string{"kernel-1-ctx_0x55d2c3a1e4f0.traceg", "kernelslist.g"} {
		if err := os.Chtimes(filepath.Join(s.TraceDir(quickstartID), "traces", f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if c := current(); c == nil || *c {
		t.Fatalf("traceCurrent = %v after the trace was post-processed again, want false", c)
	}
}
