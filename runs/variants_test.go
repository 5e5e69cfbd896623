package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

const variantsYML = `H100:
    base_file: "$GPGPUSIM_ROOT/configs/tested-cfgs/SM90_H100/gpgpusim.config"
64SM:
    extra_params: "-gpgpu_n_clusters 64"
L1OFF:
    extra_params: "-gmem_skip_L1D 1"
PWR_ENABLE:
    extra_params: "-power_simulation_enabled 1"
`

// variantRig is a Manager whose simulator (the stand-in, counting its
// calls) checks variants, over the sample configs and variantsYML, with
// the quickstart trace ready and an executor that starts what it is
// given on the test's word.
type variantRig struct {
	*managerRig
	yml   string
	calls func() int
}

func newVariantRig(t *testing.T) *variantRig {
	t.Helper()
	sim := fakesim.Build(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "accel-sim.out")
	simconfigtest.WriteFile(t, script, "#!/bin/sh\necho >> "+calls+"\nexec "+sim+" \"$@\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	yml := filepath.Join(dir, "define-standard-cfgs.yml")
	simconfigtest.WriteFile(t, yml, variantsYML)
	r := &managerRig{t: t, d: dbtest.DB(t), exec: &fakeExec{slots: 1, started: make(chan runs.Job, 100)},
		events: &events{}, ended: make(chan cascade.Run, 100), bucket: t.TempDir()}
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	for _, e := range must(os.ReadDir(src)) {
		testkit.CopyFile(t, filepath.Join(src, e.Name()), filepath.Join(r.bucket, quickstartID, "traces", e.Name()))
	}
	tr := cascade.Trace{ID: quickstartID, State: cascade.TraceReady, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}}
	if err := r.d.SaveTrace(context.Background(), &tr); err != nil {
		t.Fatal(err)
	}
	r.m = runs.New(runs.Config{
		BucketDir: r.bucket, WorkDir: t.TempDir(), ConfigsDir: simconfigtest.Write(t, t.TempDir()), ModifiersFile: yml,
		NewExecutor: func(h runs.Host) runs.Executor { r.exec.host = h; return r.exec },
		Store:       r.d, Events: r.events, Probe: simprobeSim(script),
	})
	return &variantRig{managerRig: r, yml: yml, calls: func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}}
}

// TestLaunchVariant: a run launched under "H100-64SM" records its
// variant (canonical name, base, overrides from the modifier), its job
// gives the simulator the override after the config files, and its
// config sum differs from the base's. The overrides recorded at launch
// are what it runs with, whatever the modifiers file says by then. A
// variant the simulator refuses is refused at launch, naming the
// modifier, and stores nothing; asked again, the simulator is not run.
func TestLaunchVariant(t *testing.T) {
	t.Parallel()
	r := newVariantRig(t)
	ctx := context.Background()
	run, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: quickstartID, SimConfig: "H100-64SM", Rerun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []cascade.SimParam{{Option: "-gpgpu_n_clusters", Value: "64", From: "64SM"}}
	if run.SimConfig != "SM90_H100-64SM" || run.ConfigBase != simconfigtest.H100 || len(run.ConfigParams) != 1 || run.ConfigParams[0] != want[0] {
		t.Fatalf("run: config %q base %q params %+v", run.SimConfig, run.ConfigBase, run.ConfigParams)
	}
	// The modifiers file changes after the launch: the run keeps its own.
	simconfigtest.WriteFile(t, r.yml, strings.Replace(variantsYML, "-gpgpu_n_clusters 64", "-gpgpu_n_clusters 32", 1))
	r.run()
	job := r.nextStart()
	args := strings.Join(simconfig.SimulatorArgs(job.Config), " ")
	if !strings.HasSuffix(args, "/trace.config -gpgpu_n_clusters 64") {
		t.Errorf("job's simulator arguments %q, want the override after the config files", args)
	}
	stored := r.get(run.ID)
	base, err := runs.ConfigSum(job.Config)
	if err != nil {
		t.Fatal(err)
	}
	plain := job.Config
	plain.Params = nil
	baseSum, _ := runs.ConfigSum(plain)
	if stored.Figures.ConfigSum != base || base == baseSum {
		t.Errorf("config sum %q (the variant's %q, the base's %q): want the variant's, unlike the base's", stored.Figures.ConfigSum, base, baseSum)
	}

	before := r.calls()
	for range 2 {
		_, err = r.m.Launch(ctx, runs.LaunchInput{TraceID: quickstartID, SimConfig: "SM90_H100-L1OFF"})
		if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), "Unknown Option: '-gmem_skip_L1D' (-gmem_skip_L1D 1, from modifier L1OFF)") {
			t.Fatalf("launch with L1OFF: %v", err)
		}
	}
	if n := r.calls() - before; n != 1 {
		t.Errorf("the simulator ran %d times for two launches of one variant, want 1", n)
	}
	all, err := r.d.TraceRuns(ctx, quickstartID)
	if err != nil || len(all) != 1 {
		t.Errorf("runs stored: %d, %v; want only the first", len(all), err)
	}
}

// TestDesignSweep: a sweep over an option's values and an axis of
// modifiers launches one run per cell (base × values × modifiers, the
// last axis fastest), each recording its overrides; the simulator checks
// every new variant of a base in one call. A cell it refuses refuses the
// sweep, naming the cell's axes, and nothing is stored.
func TestDesignSweep(t *testing.T) {
	t.Parallel()
	r := newVariantRig(t)
	ctx := context.Background()
	before := r.calls()
	s, err := runs.NewSweeps(r.m).LaunchSweep(ctx, runs.SweepInput{
		TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100"}, Rerun: true,
		Axes: []cascade.SweepAxis{{Option: "-gpgpu_n_clusters", Values: []string{"33", "66", "132"}}, {Values: []string{"", "PWR_ENABLE"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.calls() - before; n != 1 {
		t.Errorf("the simulator ran %d times to check 6 variants, want 1", n)
	}
	want := []string{
		"SM90_H100 -gpgpu_n_clusters 33", "SM90_H100-PWR_ENABLE -gpgpu_n_clusters 33",
		"SM90_H100 -gpgpu_n_clusters 66", "SM90_H100-PWR_ENABLE -gpgpu_n_clusters 66",
		"SM90_H100 -gpgpu_n_clusters 132", "SM90_H100-PWR_ENABLE -gpgpu_n_clusters 132",
	}
	if strings.Join(s.SimConfigs, "|") != strings.Join(want, "|") || len(s.Axes) != 2 {
		t.Errorf("sweep cells %q axes %+v, want %q", s.SimConfigs, s.Axes, want)
	}
	rs, err := r.d.SweepRuns(ctx, s.ID)
	if err != nil || len(rs) != 6 {
		t.Fatalf("sweep runs: %d, %v", len(rs), err)
	}
	for _, run := range rs {
		if run.ConfigBase != simconfigtest.H100 || len(run.ConfigParams) == 0 {
			t.Errorf("run %s: base %q params %+v", run.SimConfig, run.ConfigBase, run.ConfigParams)
		}
	}

	_, err = runs.NewSweeps(r.m).LaunchSweep(ctx, runs.SweepInput{
		TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100"},
		Axes: []cascade.SweepAxis{{Values: []string{"", "L1OFF", "L2OFF"}}, {Option: "-gpgpu_n_clusters", Values: []string{"x", "7"}}},
	})
	for _, w := range []string{"nothing queued", `simConfigs[0] × axes[0].values[2] × axes[1].values[0]: no modifier "L2OFF"`,
		`simConfigs[0] × axes[0].values[0] × axes[1].values[0]: override -gpgpu_n_clusters: -gpgpu_n_clusters "x": not a whole number (SM90_H100 has 132)`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("refused sweep: %v, want %q", err, w)
		}
	}
	_, err = runs.NewSweeps(r.m).LaunchSweep(ctx, runs.SweepInput{
		TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100"},
		Axes: []cascade.SweepAxis{{Values: []string{"", "L1OFF"}}, {Option: "-gpgpu_n_clusters", Values: []string{"5", "7"}}},
	})
	if err == nil || !strings.Contains(err.Error(), "simConfigs[0] × axes[0].values[1] × axes[1].values[0]: SM90_H100-L1OFF -gpgpu_n_clusters 5: the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-gmem_skip_L1D'") {
		t.Errorf("sweep with L1OFF: %v", err)
	}
	if all, _ := r.d.TraceRuns(ctx, quickstartID); len(all) != 6 {
		t.Errorf("%d runs stored, want the first sweep's 6", len(all))
	}
}
