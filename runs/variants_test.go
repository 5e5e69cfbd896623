package runs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	// Each said once, on the fields its cells share (not for each value
	// of the other axis), and nothing more; the cells that resolved are
	// asked of the simulator all the same, and its refusal of L1OFF is
	// said with the rest: "3 problems".
	for _, w := range []string{"nothing queued (3 problems)", `simConfigs[0] × axes[0].values[2]: no modifier "L2OFF"`,
		`simConfigs[0] × axes[1].values[0]: override -gpgpu_n_clusters: -gpgpu_n_clusters "x": not a whole number (SM90_H100 has 132)`,
		`simConfigs[0] × axes[0].values[1] × axes[1].values[1]: SM90_H100-L1OFF -gpgpu_n_clusters 7: the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-gmem_skip_L1D'`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("refused sweep: %v, want %q", err, w)
		}
	}
	_, err = runs.NewSweeps(r.m).LaunchSweep(ctx, runs.SweepInput{
		TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100"},
		Axes: []cascade.SweepAxis{{Values: []string{"", "L1OFF"}}, {Option: "-gpgpu_n_clusters", Values: []string{"5", "7"}}},
	})
	// Both cells with L1OFF are refused, said once, on that value.
	if err == nil || !strings.Contains(err.Error(), "(1 problem): simConfigs[0] × axes[0].values[1]: the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-gmem_skip_L1D'") {
		t.Errorf("sweep with L1OFF: %v", err)
	}
	if all, _ := r.d.TraceRuns(ctx, quickstartID); len(all) != 6 {
		t.Errorf("%d runs stored, want the first sweep's 6", len(all))
	}
}

// TestSweepTooManyStatesTheTrueCount: a grid past what an int holds is
// refused with its true size, not one wrapped around 2^64.
func TestSweepTooManyStatesTheTrueCount(t *testing.T) {
	t.Parallel()
	r := newVariantRig(t)
	axes := func(n, values int) []cascade.SweepAxis {
		as := make([]cascade.SweepAxis, n)
		for i := range as {
			as[i].Option = fmt.Sprintf("-opt_%d", i)
			for v := range values {
				as[i].Values = append(as[i].Values, strconv.Itoa(v))
			}
		}
		return as
	}
	for _, tc := range []struct {
		axes []cascade.SweepAxis
		want string
	}{
		{axes(7, 1000), "too many runs: 1 trace × 1000000000000000000000 configs = 1000000000000000000000; a sweep launches at most 10000"},
		// 2^64 cells, which an int wraps to 0.
		{axes(64, 2), "too many runs: 1 trace × 18446744073709551616 configs = 18446744073709551616;"},
	} {
		_, err := runs.NewSweeps(r.m).LaunchSweep(context.Background(), runs.SweepInput{
			TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100"}, Axes: tc.axes,
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d axes: %v, want %q", len(tc.axes), err, tc.want)
		}
	}
}

// TestSweepAxisProblemOnce: a problem of one axis's option or value is
// said once, on that axis or value, not once per cell of the grid (it
// was 12 times for 2 bases × 2 modifiers × 3 values).
func TestSweepAxisProblemOnce(t *testing.T) {
	t.Parallel()
	r := newVariantRig(t)
	for _, tc := range []struct {
		axis cascade.SweepAxis
		want string
	}{
		{cascade.SweepAxis{Option: "gpgpu_n_clusters", Values: []string{"1", "2", "3"}},
			`(1 problem): axes[1].option: "gpgpu_n_clusters" is not an option: options start with '-'`},
		{cascade.SweepAxis{Option: "-no_such_option", Values: []string{"1", "2", "3"}},
			"(1 problem): axes[1].option: -no_such_option: the simulator refuses it, whatever its value: GPGPU-Sim ** ERROR: Unknown Option: '-no_such_option'"},
		{cascade.SweepAxis{Option: "-gpgpu_scheduler", Values: []string{"lrr", "lrr\ngto", "gto"}},
			`(1 problem): axes[1].values[1]: -gpgpu_scheduler "lrr\ngto": the value holds a line break`},
		{cascade.SweepAxis{Option: "-gpgpu_n_clusters", Values: []string{"1", "x", "3"}},
			// Once per base, as each base's own value is named.
			`(2 problems): simConfigs[0] × axes[1].values[1]: override -gpgpu_n_clusters: -gpgpu_n_clusters "x": not a whole number (SM90_H100 has 132); ` +
				`simConfigs[1] × axes[1].values[1]: override -gpgpu_n_clusters: -gpgpu_n_clusters "x": not a whole number (SM90_H100 has 64)`},
	} {
		_, err := runs.NewSweeps(r.m).LaunchSweep(context.Background(), runs.SweepInput{
			TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100", "H100-64SM"},
			Axes: []cascade.SweepAxis{{Values: []string{"", "PWR_ENABLE"}}, tc.axis},
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("axis %+v: %v, want %q", tc.axis, err, tc.want)
		}
	}
}

// TestSweepModifierTwice: an axis's modifier that the base names already
// refuses the cells that would name it twice, said once, on the base and
// the value.
func TestSweepModifierTwice(t *testing.T) {
	t.Parallel()
	r := newVariantRig(t)
	_, err := runs.NewSweeps(r.m).LaunchSweep(context.Background(), runs.SweepInput{
		TraceIDs: []string{quickstartID}, SimConfigs: []string{"H100-64SM"},
		Axes: []cascade.SweepAxis{{Values: []string{"", "64SM"}}, {Values: []string{"", "PWR_ENABLE"}}},
	})
	want := "sweep refused, nothing queued (1 problem): simConfigs[0] × axes[0].values[1]: modifier 64SM is given twice; give it once"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("sweep: %v, want %q", err, want)
	}
}
