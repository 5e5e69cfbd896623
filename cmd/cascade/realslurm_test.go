package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// TestRealAccelSimOnSlurm: the real simulator (Accel-Sim dev) as Slurm
// jobs on the project's one-node cluster (scripts/slurm.sh), the server's
// executor. The raw vecAdd trace runs on SM6_TITANX as a batch job with
// the cycles and instructions ../shared/accelsim/README.md gives and the
// figures a local run records; a sampled run of a small LLM-like trace
// runs its segments as the tasks of one job array, every launch
// projected. (TestRealAccelSim runs vecAdd on SM7_QV100 too, and
// TestRealAccelSimSampledRun checks a sampled run of the same trace
// against the full run: here either would simulate it again, on the two
// cores CI shares.)
func TestRealAccelSimOnSlurm(t *testing.T) {
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	checkout := testkit.RealAccelSim(t)
	cluster := slurmtest.Start(t)
	data := t.TempDir()
	// The test cluster gives a job 128 MB unless asked (DefMemPerCPU), and
	// the real simulator peaks at 150 MB on SM6_TITANX and 500 MB on
	// SM7_QV100: a job ends OUT_OF_MEMORY on the default. A user sets
	// CASCADE_SLURM_MEM, as docs/slurm.md says; 1 GB a job lets all of
	// this test's jobs run at once on the cluster's 8 GB.
	addr, out, _ := realServer(t, data, checkout, "CASCADE_EXECUTOR=slurm", "SLURM_CONF="+cluster.Conf(),
		"CASCADE_SLURM_POLL_INTERVAL=300ms", "CASCADE_SLURM_TIMEOUT=10s", "CASCADE_SLURM_MEM=1G")
	testkit.Eventually(t, 10*time.Second, "start-up report", func() bool { return strings.Contains(out.String(), "cascade: S3 endpoint") })

	gen := t.TempDir()
	llm, err := tracegen.GenerateLLM(context.Background(), gen, tracegen.LLMConfig{
		Launches: 24, Layers: 1, DecodeSteps: 2, From: testkit.RealTrace(t, "vecadd-sm61")})
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(data, "s3", "cascade", "traces")
	for name, src := range map[string]string{"vecadd": testkit.RealTrace(t, "vecadd-sm61"), "llm": gen} {
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: prefix, RunName: name}); err != nil {
			t.Fatal(err)
		}
	}
	waitTrace(t, addr, "vecadd", "READY")
	waitTrace(t, addr, "llm", "READY")

	// The sampled run first: its segments are the longer jobs.
	var p struct{ PlanSampling struct{ ID string } }
	if errs := gqlVars(t, addr, `mutation { planSampling(traceId: "llm", target: {error: 0.02}, warmupStep: true) { id } }`, nil, &p); len(errs) > 0 {
		t.Fatalf("plan: %v", errs)
	}
	var sampled struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(t, addr, `mutation($p: ID!) { launchRun(input: {traceId: "llm", simConfig: "SM6_TITANX", sampling: {plan: $p}}) { id } }`,
		map[string]any{"p": p.PlanSampling.ID}, &sampled); len(errs) > 0 {
		t.Fatalf("launch the sampled run: %v", errs)
	}
	const config, cycles = "SM6_TITANX", 11789
	var l struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(t, addr, `mutation($c: String!) { launchRun(input: {traceId: "vecadd", simConfig: $c}) { id } }`,
		map[string]any{"c": config}, &l); len(errs) > 0 {
		t.Fatalf("launch on %s: %v", config, errs)
	}

	type onSlurm struct {
		realRun
		Executor string
		History  []string
		Slurm    *struct {
			JobID       int64
			ArrayTaskID *int
			State       string
		}
	}
	const slurmFields = realRunFields + ` executor history slurm { jobId arrayTaskId state }`
	const asked = "asking for mem=1024M; the rest the cluster's defaults"
	var batch struct{ Run onSlurm }
	testkit.Eventually(t, 5*time.Minute, "run on "+config+" over", func() bool {
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+slurmFields+` } }`, map[string]any{"id": l.LaunchRun.ID}, &batch)
		return batch.Run.State == "SUCCEEDED" || batch.Run.State == "FAILED"
	})
	if batch.Run.State != "SUCCEEDED" || len(batch.Run.Kernels) != 1 {
		t.Fatalf("run on %s: %s, error %v", config, batch.Run.State, batch.Run.Error)
	}
	if batch.Run.Executor != "slurm" || batch.Run.Slurm == nil || batch.Run.Slurm.JobID == 0 || batch.Run.Slurm.ArrayTaskID != nil {
		t.Errorf("run on %s: executor %s, job %+v; want a batch job of its own", config, batch.Run.Executor, batch.Run.Slurm)
	}
	if h := strings.Join(batch.Run.History, "\n"); !strings.Contains(h, asked) {
		t.Errorf("run on %s: history %q does not say what its job asked for (%q)", config, batch.Run.History, asked)
	}
	if k := batch.Run.Kernels[0]; k.Name != "_Z6vecAddPdS_S_i" || k.SimCycles != cycles || k.SimInstructions != 2203168 {
		t.Errorf("run on %s: %+v, want %d cycles and 2,203,168 instructions", config, k, cycles)
	}
	checkStatsAgainstLog(t, config, batch.Run.realRun, filepath.Join(data, "work", "runs", batch.Run.ID, "accel-sim.log"))
	checkFigures(t, config, batch.Run.realRun)

	var r struct{ Run realSampled }
	testkit.Eventually(t, 15*time.Minute, "sampled run over", func() bool {
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+realSampledFields+` } }`, map[string]any{"id": sampled.LaunchRun.ID}, &r)
		return r.Run.State == "FAILED" || r.Run.State == "CANCELLED" || r.Run.State == "SUCCEEDED"
	})
	s := r.Run.Sampling
	if r.Run.State != "SUCCEEDED" || s == nil || s.ProjectedCycles == nil {
		t.Fatalf("sampled run %s: %s, error %v", r.Run.ID, r.Run.State, r.Run.Error)
	}
	jobs, tasks := map[int64]bool{}, map[int]bool{}
	for _, seg := range s.Segments {
		var sr struct{ Run onSlurm }
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+slurmFields+` } }`, map[string]any{"id": seg.ID}, &sr)
		j := sr.Run.Slurm
		if sr.Run.State != "SUCCEEDED" || j == nil || j.ArrayTaskID == nil || tasks[*j.ArrayTaskID] {
			t.Errorf("segment %s: %s, job %+v; want a task of its own", seg.ID, sr.Run.State, j)
			continue
		}
		checkFigures(t, "SM6_TITANX segment", sr.Run.realRun)
		if h := strings.Join(sr.Run.History, "\n"); !strings.Contains(h, "each "+asked) {
			t.Errorf("segment %s: history %q does not say what its task asked for", seg.ID, sr.Run.History)
		}
		jobs[j.JobID], tasks[*j.ArrayTaskID] = true, true
	}
	if len(jobs) != 1 || len(tasks) != len(s.Segments) {
		t.Errorf("%d segments are %d tasks of %d job arrays, want one array", len(s.Segments), len(tasks), len(jobs))
	}
	simulated, sum := 0, 0.0
	for _, k := range r.Run.Kernels {
		if k.Simulated == nil || k.SimCycles <= 0 {
			t.Fatalf("kernel %d: %+v", k.KernelID, k)
		}
		if *k.Simulated {
			simulated++
		}
		sum += float64(k.SimCycles)
	}
	if len(r.Run.Kernels) != len(llm.Launches) || simulated != s.Representatives || math.Abs(sum-*s.ProjectedCycles) > float64(len(llm.Launches)) ||
		*s.CiLowCycles > *s.ProjectedCycles || *s.CiHighCycles < *s.ProjectedCycles {
		t.Fatalf("%d kernels of %d launches, %d simulated of %d representatives, summing to %.0f; projected %.0f [%.0f, %.0f]",
			len(r.Run.Kernels), len(llm.Launches), simulated, s.Representatives, sum, *s.ProjectedCycles, *s.CiLowCycles, *s.CiHighCycles)
	}
	t.Logf("on Slurm: %d segments, one job array; projected %.0f cycles [%.0f, %.0f]", len(s.Segments), *s.ProjectedCycles, *s.CiLowCycles, *s.CiHighCycles)
}
