package runs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// realVariantRig is a Manager over the real simulator's tested configs
// and modifiers, with a ready trace (the quickstart's) and an executor
// that starts nothing: launches are checked and stored, never run.
func realVariantRig(b *testing.B) *runs.Manager {
	checkout, err := accelsim.Find(testkit.RealAccelSim(b))
	if err != nil {
		b.Fatal(err)
	}
	d := dbtest.DB(b)
	bucket := b.TempDir()
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		testkit.CopyFile(b, filepath.Join(src, e.Name()), filepath.Join(bucket, quickstartID, "traces", e.Name()))
	}
	tr := cascade.Trace{ID: quickstartID, State: cascade.TraceReady, TraceGPUArch: "sm_70", Prompts: []string{}, Warnings: []string{}}
	if err := d.SaveTrace(context.Background(), &tr); err != nil {
		b.Fatal(err)
	}
	exec := &fakeExec{slots: 1, started: make(chan runs.Job, 1)}
	return runs.New(runs.Config{
		BucketDir: bucket, WorkDir: b.TempDir(),
		ConfigsDir: checkout.GPGPUSimConfigs, TraceConfigsDir: checkout.TraceConfigs, ModifiersFile: checkout.Modifiers,
		NewExecutor: func(h runs.Host) runs.Executor { exec.host = h; return exec },
		Store:       d, Events: &events{},
		Probe: simprobe.Simulator{Command: []string{checkout.Binary}, Env: []string{"LD_LIBRARY_PATH=" + checkout.LibDir}},
	})
}

// BenchmarkRealVariantCheck: a launch's check of a variant no launch
// asked for before (-gpgpu_n_clusters with a new value each time) by the
// real simulator: resolving its name and asking the simulator whether it
// takes the options (issue 30's goal: under 200 ms).
//
//	CASCADE_TEST_ACCELSIM_DIR=../shared/accelsim go test ./runs -run '^$' -bench RealVariantCheck -benchtime 20x
func BenchmarkRealVariantCheck(b *testing.B) {
	m := realVariantRig(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("QV100-1455MHZ -gpgpu_n_clusters %d", 1+i%1000)
		if _, err := m.Configs().Variant(ctx, name, []cascade.SimParam{{Option: "-gpgpu_max_insn", Value: fmt.Sprint(1_000_000 + i)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRealDesignSweep1000: launchSweep of a 1,000-cell design
// sweep (SM7_QV100 × 40 cluster counts × 25 core clocks) on one trace,
// every variant new to the server: the grid resolved, every variant
// checked by the real simulator, the runs stored and queued (issue 30's
// goal: under 5 s). s/sweep is the figure.
//
//	CASCADE_TEST_ACCELSIM_DIR=../shared/accelsim go test ./runs -run '^$' -bench RealDesignSweep1000 -benchtime 3x
func BenchmarkRealDesignSweep1000(b *testing.B) {
	m := realVariantRig(b)
	ctx := context.Background()
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		clusters := make([]string, 40)
		for k := range clusters {
			clusters[k] = fmt.Sprint(2*k + 2)
		}
		clocks := make([]string, 25)
		for k := range clocks {
			f := 1000 + 20*k + i // new variants each round
			clocks[k] = fmt.Sprintf("%d.0:%d.0:%d.0:850.0", f, f, f)
		}
		start := time.Now()
		s, err := runs.NewSweeps(m).LaunchSweep(ctx, runs.SweepInput{
			TraceIDs: []string{quickstartID}, SimConfigs: []string{"SM7_QV100"}, Rerun: true,
			Axes: []cascade.SweepAxis{{Option: "-gpgpu_n_clusters", Values: clusters}, {Option: "-gpgpu_clock_domains", Values: clocks}},
		})
		total += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if s.RunCount != 1000 {
			b.Fatalf("%d runs, want 1,000", s.RunCount)
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/sweep")
}
