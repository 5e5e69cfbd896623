package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// sampledID is the trace of the sampled-run tests: sampledLaunches
// launches of the quickstart's four kernels in turn, with real timing
// that varies from launch to launch.
const (
	sampledID       = "sp"
	sampledLaunches = 40
	sampledCtx      = "0x55d2c3a1e4f0"
)

// writeSampledTrace writes the sampled-run tests' trace to a new
// directory: processed, so it is ready at once.
func writeSampledTrace(t *testing.T) string {
	t.Helper()
	qs := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	src := t.TempDir()
	tr := filepath.Join(src, "traces")
	if err := os.MkdirAll(tr, 0o755); err != nil {
		t.Fatal(err)
	}
	type kind struct {
		name                 string
		grid, block          [3]int
		insts                int
		durationNs           float64
		quickstartKernelFile string
	}
	kinds := []kind{
		{"_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii", [3]int{2, 1, 1}, [3]int{64, 1, 1}, 48, 3100, "kernel-1-ctx_0x55d2c3a1e4f0.traceg"},
		{"_Z14gemm_bf16_tileILi64ELi64EEvPK13__nv_bfloat16S2_PS0_iii", [3]int{2, 2, 1}, [3]int{128, 1, 1}, 208, 9800, "kernel-2-ctx_0x55d2c3a1e4f0.traceg"},
		{"_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EEEvPT_PKS3_i", [3]int{3, 1, 1}, [3]int{64, 1, 1}, 60, 2400, "kernel-3-ctx_0x55d2c3a1e4f0.traceg"},
		{"_Z19residual_add_kernelP13__nv_bfloat16PKS_i", [3]int{2, 1, 1}, [3]int{32, 1, 1}, 14, 1500, "kernel-4-ctx_0x55d2c3a1e4f0.traceg"},
	}
	var list, raw strings.Builder
	stats := "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"
	type row struct {
		KernelID   int     `json:"kernel_id"`
		Context    string  `json:"context"`
		KernelName string  `json:"kernel_name"`
		Invocation int     `json:"invocation"`
		DurationNs float64 `json:"duration_ns"`
	}
	var rows []row
	list.WriteString("MemcpyHtoD,0x00007f1c2e000000,8192\n")
	raw.WriteString("MemcpyHtoD,0x00007f1c2e000000,8192\n")
	for i := 1; i <= sampledLaunches; i++ {
		k := kinds[(i-1)%len(kinds)]
		b, err := os.ReadFile(filepath.Join(qs, "traces", k.quickstartKernelFile))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), fmt.Sprintf("-kernel id = %d\n", (i-1)%len(kinds)+1), fmt.Sprintf("-kernel id = %d\n", i), 1)
		name := fmt.Sprintf("kernel-%d-ctx_%s", i, sampledCtx)
		if err := os.WriteFile(filepath.Join(tr, name+".traceg"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		list.WriteString(name + ".traceg\n")
		raw.WriteString(name + ".trace\n")
		g, bl := k.grid, k.block
		stats += fmt.Sprintf("%s.trace, %s, %d, %d, %d, %d, %d, %d, %d, %d, %d,%d\n", name, k.name,
			g[0], g[1], g[2], g[0]*g[1]*g[2], bl[0], bl[1], bl[2], bl[0]*bl[1]*bl[2], k.insts, k.insts)
		// Two clusters a kernel: every third launch of a kind takes longer.
		d := k.durationNs * (1 + 0.002*float64(i%3))
		if (i/4)%3 == 2 {
			d *= 2.5
		}
		rows = append(rows, row{KernelID: i, Context: sampledCtx, KernelName: k.name, DurationNs: d})
	}
	files := map[string]string{
		"traces/kernelslist.g":                 list.String(),
		"traces/kernelslist_ctx_" + sampledCtx: raw.String(),
		"traces/stats_ctx_" + sampledCtx:       stats,
		"metadata.json":                        `{"run_name": "sampled", "model": "sampled-test", "gpu": "NVIDIA H100 80GB HBM3", "trace_gpu_arch": "sm_90", "real_timing": "real_timing.json"}`,
	}
	writeTraceFiles(t, src, files, rows)
	return src
}

// sampledServer starts a server whose simulator is the stand-in with the
// given environment, with the test configs, the sampled-run trace
// uploaded and ready.
func sampledServer(t *testing.T, dbURL string, env []string, configure ...func(*app.Config)) *servertest.TestServer {
	t.Helper()
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	s := servertest.Server(t, append([]func(*app.Config){func(c *app.Config) {
		c.SimCmd = append(append([]string{"env"}, env...), sim)
		c.SimConfigsDir = cfgDir
		c.DatabaseURL = dbURL
	}}, configure...)...)
	if _, err := os.Stat(s.TraceDir(sampledID)); err == nil {
		return s // a restarted server on the same data directory
	}
	if _, err := upload.Upload(context.Background(), upload.Options{Source: writeSampledTrace(t), PrefixDir: s.Config.BucketDir(), RunName: sampledID}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "sampled trace ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `{ trace(id: "`+sampledID+`") { state } }`, nil, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	return s
}

type samplingPlan struct {
	ID       string
	Samples  int
	Segments []struct{ Start, End, FirstLaunch, LastLaunch, Representatives int }
	Strata   []struct {
		Representatives []struct{ Launch, KernelID int }
	}
}

func planSampling(t *testing.T, s *servertest.TestServer) samplingPlan {
	t.Helper()
	var r struct{ PlanSampling samplingPlan }
	s.MustDo(t, `mutation { planSampling(traceId: "`+sampledID+`", target: {error: 0.05}, warmup: 0) {
		id samples segments { start end firstLaunch lastLaunch representatives } strata { representatives { launch kernelId } } } }`, nil, &r)
	if len(r.PlanSampling.Segments) < 2 {
		t.Fatalf("plan %+v: want at least two ranges to simulate", r.PlanSampling)
	}
	return r.PlanSampling
}

type sampledKernel struct {
	KernelID      int
	Name          string
	SimCycles     int64
	Simulated     *bool
	ProjectedFrom *int
	FullCycles    *int64
	FullErrorPct  *float64
}

type sampledRunView struct {
	ID, State    string
	Error        *string
	FailureClass *string
	Progress     struct{ KernelsDone, KernelsTotal int }
	KernelPage   struct{ Nodes []sampledKernel }
	Comparison   *struct{ Mape float64 }
	Figures      struct{ SimCycles *int64 }
	Sampling     *struct {
		Plan     struct{ ID string }
		Segments []struct {
			ID, State    string
			SameAs       *struct{ ID string }
			Label        *string
			FailureClass *string
			SampledBy    *struct{ ID string }
			Kernels      []struct {
				KernelID  int
				SimCycles int64
			}
			History  []string
			Progress struct{ KernelsDone, KernelsTotal int }
		}
		Representatives                            int
		SimulatedLaunches                          int
		ProjectedCycles, CiLowCycles, CiHighCycles *float64
		ExpectedError, ProjectedNs                 *float64
		SimulatorSeconds                           float64
		FullRunSecondsEstimate                     *float64
		ValidationRun                              *struct{ ID, State string }
		Check                                      *struct {
			FullRun               struct{ ID string }
			FullCycles            float64
			TotalErrorPct         float64
			BeyondLatencyErrorPct *float64
			LaunchLatencyCycles   *int
			InsideInterval        bool
			KernelMape            float64
			MaxKernelErrorPct     float64
			KernelsCompared       int
			MeasuredMape          *float64
			FullMeasuredMape      *float64
		}
	}
}

const sampledRunFields = `id state error failureClass progress { kernelsDone kernelsTotal }
	kernelPage(first: 1000) { nodes { kernelId name simCycles simulated projectedFrom fullCycles fullErrorPct } }
	comparison { mape } figures { simCycles }
	sampling { plan { id } segments { id state label failureClass sameAs { id } sampledBy { id } kernels { kernelId simCycles } history progress { kernelsDone kernelsTotal } }
		representatives simulatedLaunches projectedCycles ciLowCycles ciHighCycles expectedError projectedNs
		simulatorSeconds fullRunSecondsEstimate validationRun { id state }
		check { fullRun { id } fullCycles totalErrorPct beyondLatencyErrorPct launchLatencyCycles insideInterval kernelMape maxKernelErrorPct
			kernelsCompared measuredMape fullMeasuredMape } }`

func getSampled(t *testing.T, s *servertest.TestServer, id string) sampledRunView {
	t.Helper()
	var r struct{ Run sampledRunView }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+sampledRunFields+` } }`, map[string]any{"id": id}, &r)
	return r.Run
}

// fullRun is what the tests read of a full run.
type fullRun struct {
	ID, State  string
	Kernels    []struct{ SimCycles *int64 }
	Comparison *struct{ Mape float64 }
}

// waitFull waits for the full run id to succeed and returns it with its
// kernels' cycles.
func waitFull(t *testing.T, s *servertest.TestServer, id string) (r fullRun) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("run %s SUCCEEDED", id), func() bool {
		var out struct{ Run fullRun }
		s.MustDo(t, `query($id: ID!) { run(id: $id) { id state kernels { simCycles } comparison { mape } } }`, map[string]any{"id": id}, &out)
		r = out.Run
		return r.State == "SUCCEEDED"
	})
	return r
}

func waitSampled(t *testing.T, s *servertest.TestServer, id string, state string) sampledRunView {
	t.Helper()
	var r sampledRunView
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("sampled run %s %s", id, state), func() bool {
		r = getSampled(t, s, id)
		return r.State == state
	})
	return r
}

func launchSampled(t *testing.T, s *servertest.TestServer, plan string, validate bool) sampledRunView {
	t.Helper()
	var r struct{ LaunchRun sampledRunView }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+sampledRunFields+` } }`, map[string]any{"in": map[string]any{
		"traceId": sampledID, "simConfig": simconfigtest.H100, "rerun": true,
		"sampling": map[string]any{"plan": plan, "validate": validate},
	}}, &r)
	return r.LaunchRun
}

// launchFull launches a full run of the sampled trace on H100.
func launchFull(t *testing.T, s *servertest.TestServer) (r struct{ ID string }) {
	t.Helper()
	var out struct{ LaunchRun struct{ ID string } }
	s.MustDo(t, `mutation { launchRun(input: {traceId: "`+sampledID+`", simConfig: "`+simconfigtest.H100+`", rerun: true}) { id } }`, nil, &out)
	return out.LaunchRun
}

// TestSampledRunSucceeds launches a sampled run with validate on the
// stand-in: its segments run as runs of their own, and once all have
// succeeded every launch of the trace has a kernel, the representatives'
// cycles are their segments', the projected total is sampling.Project's
// of them, and the check against the validation run says what the two
// runs' kernels say.
func TestSampledRunSucceeds(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := sampledServer(t, u, []string{"FAKESIM_MODE=ok"})
			plan := planSampling(t, s)
			r := launchSampled(t, s, plan.ID, true)
			if r.State != "QUEUED" || r.Sampling == nil || len(r.Sampling.Segments) != len(plan.Segments) {
				t.Fatalf("launched: %+v", r)
			}
			if r.Progress.KernelsTotal != plan.Samples || r.Sampling.Representatives != plan.Samples {
				t.Errorf("progress %+v, representatives %d: want %d", r.Progress, r.Sampling.Representatives, plan.Samples)
			}
			r = waitSampled(t, s, r.ID, "SUCCEEDED")
			sr := r.Sampling
			t.Logf("%d representatives in %d segments: projected %v cycles ±%v, check %+v", plan.Samples, len(sr.Segments), ptrF(sr.ProjectedCycles), ptrF(sr.ExpectedError), sr.Check)
			if r.Progress.KernelsDone != plan.Samples || r.Progress.KernelsTotal != plan.Samples {
				t.Errorf("progress %+v: want %d of %d", r.Progress, plan.Samples, plan.Samples)
			}

			// Each segment: its range's kernels, simulated on their own.
			segCycles := map[int]int64{} // kernel id → a segment's cycles
			for i, seg := range sr.Segments {
				rg := plan.Segments[i]
				if seg.State != "SUCCEEDED" || seg.SampledBy == nil || seg.SampledBy.ID != r.ID ||
					cascade.Deref(seg.Label) != fmt.Sprintf("segment %d of %d", i+1, len(sr.Segments)) || len(seg.Kernels) != rg.End-rg.Start+1 {
					t.Errorf("segment %d: %+v, range %+v", i+1, seg, rg)
				}
				for _, k := range seg.Kernels {
					segCycles[k.KernelID] = k.SimCycles
				}
				// L2 warmed before a segment that launches before it
				// touched the lines of; the warming kernel is none of its
				// kernels, nor counted in its progress.
				warmed := slices.ContainsFunc(seg.History, func(h string) bool { return strings.Contains(h, " L2 warmed: ") })
				if warmed != (len(seg.Kernels) > 0 && seg.Kernels[0].KernelID > 1) || seg.Progress.KernelsDone != len(seg.Kernels) || seg.Progress.KernelsTotal != len(seg.Kernels) {
					t.Errorf("segment %d (range %+v): history %q, progress %+v of %d kernels", i+1, rg, seg.History, seg.Progress, len(seg.Kernels))
				}
			}

			// Every launch, representatives as simulated.
			ks := r.KernelPage.Nodes
			if len(ks) != sampledLaunches {
				t.Fatalf("%d kernels, want %d", len(ks), sampledLaunches)
			}
			reps := map[int]bool{}
			for _, st := range plan.Strata {
				for _, rep := range st.Representatives {
					reps[rep.Launch] = true
				}
			}
			sim := map[int]sampling.Simulated{}
			for i, k := range ks {
				if k.KernelID != i+1 || k.Simulated == nil || *k.Simulated != reps[i] {
					t.Errorf("kernel %d: %+v (representative: %v)", i, k, reps[i])
					continue
				}
				if reps[i] {
					if k.SimCycles != segCycles[k.KernelID] || k.ProjectedFrom != nil {
						t.Errorf("representative %d: %+v, its segment's cycles %d", i, k, segCycles[k.KernelID])
					}
					sim[i] = sampling.Simulated{Cycles: float64(segCycles[k.KernelID])}
				} else if k.ProjectedFrom == nil || !reps[*k.ProjectedFrom] || ks[*k.ProjectedFrom].Name != k.Name || k.SimCycles <= 0 {
					t.Errorf("projected kernel %d: %+v", i, k)
				}
			}

			// The projection is sampling.Project's of the segments' cycles,
			// its warm-up allowance that of warmed segments (each segment
			// after the first was warmed, above).
			ps := &plans.Service{Store: s.DB, BucketDir: s.Config.BucketDir()}
			p, err := ps.SamplingPlan(context.Background(), plan.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.Strata, err = ps.SamplingStrata(context.Background(), plan.ID); err != nil {
				t.Fatal(err)
			}
			tr, err := s.DB.Trace(context.Background(), sampledID)
			if err != nil {
				t.Fatal(err)
			}
			in, err := ps.Input(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := sampling.ProjectWith(p, in, sim, sampling.L2Warmed)
			if err != nil {
				t.Fatal(err)
			}
			if sr.ProjectedCycles == nil || !near(*sr.ProjectedCycles, pr.Total) || !near(*sr.CiLowCycles, pr.Low) ||
				!near(*sr.CiHighCycles, pr.High) || !near(*sr.ExpectedError, pr.Error) {
				t.Errorf("projection %v [%v, %v] ±%v, want %v [%v, %v] ±%v", ptrF(sr.ProjectedCycles), ptrF(sr.CiLowCycles),
					ptrF(sr.CiHighCycles), ptrF(sr.ExpectedError), pr.Total, pr.Low, pr.High, pr.Error)
			}
			for i, k := range ks {
				if !reps[i] && k.SimCycles != int64(math.Round(pr.Cycles[i])) {
					t.Errorf("kernel %d: %d cycles, projected %v", i, k.SimCycles, pr.Cycles[i])
				}
			}
			if c := r.Figures.SimCycles; c == nil || *c != int64(math.Round(pr.Total)) {
				t.Errorf("figures' simCycles %v, want the projected total %v", cascade.Deref(c), pr.Total)
			}
			if sr.ProjectedNs == nil || !near(*sr.ProjectedNs, pr.Total*1000/h100ClockMHz) {
				t.Errorf("projectedNs %v, want %v", ptrF(sr.ProjectedNs), pr.Total*1000/h100ClockMHz)
			}
			if r.Comparison == nil {
				t.Errorf("no comparison with measured time")
			}

			// The check, against the validation run launched with it.
			if sr.ValidationRun == nil {
				t.Fatal("no validation run")
			}
			full := waitFull(t, s, sr.ValidationRun.ID)
			var c = getSampled(t, s, r.ID)
			if c.Sampling.Check == nil {
				t.Fatal("no check")
			}
			ch := c.Sampling.Check
			var fullTotal, sumAbs, maxAbs float64
			for i, fk := range full.Kernels {
				fc := float64(*fk.SimCycles)
				fullTotal += fc
				sk := c.KernelPage.Nodes[i]
				e := 100 * (float64(sk.SimCycles) - fc) / fc
				sumAbs += math.Abs(e)
				maxAbs = max(maxAbs, math.Abs(e))
				if sk.FullCycles == nil || *sk.FullCycles != *fk.SimCycles || sk.FullErrorPct == nil || !near(*sk.FullErrorPct, e) {
					t.Errorf("kernel %d: %+v, full run's cycles %d", i, sk, *fk.SimCycles)
				}
			}
			proj := *sr.ProjectedCycles
			if ch.FullRun.ID != full.ID || ch.FullCycles != fullTotal || !near(ch.TotalErrorPct, 100*(proj-fullTotal)/fullTotal) ||
				ch.KernelsCompared != sampledLaunches || !near(ch.KernelMape, sumAbs/sampledLaunches) || !near(ch.MaxKernelErrorPct, maxAbs) ||
				ch.InsideInterval != (*sr.CiLowCycles <= fullTotal && fullTotal <= *sr.CiHighCycles) {
				t.Errorf("check %+v: full total %v, projected %v", *ch, fullTotal, proj)
			}
			if l := ch.LaunchLatencyCycles; l == nil || *l != 5000 || ch.BeyondLatencyErrorPct == nil ||
				!near(*ch.BeyondLatencyErrorPct, 100*(proj-fullTotal)/(fullTotal-float64(sampledLaunches*(*l)))) {
				t.Errorf("launch latency %v, error beyond it %v", ch.LaunchLatencyCycles, ptrF(ch.BeyondLatencyErrorPct))
			}
			// The kernels CSV says what the kernels table does.
			rows := getCSV(t, s, "/runs/"+r.ID+"/kernels.csv")
			col := map[string]int{}
			for i, h := range rows[0] {
				col[h] = i
			}
			if len(rows) != sampledLaunches+1 {
				t.Fatalf("kernels.csv: %d rows, want %d and a header", len(rows), sampledLaunches+1)
			}
			for i, row := range rows[1:] {
				k := c.KernelPage.Nodes[i]
				from := ""
				if k.ProjectedFrom != nil {
					from = strconv.Itoa(*k.ProjectedFrom)
				}
				fe, err := strconv.ParseFloat(row[col["full_error_pct"]], 64)
				if k.Simulated == nil || k.FullCycles == nil || k.FullErrorPct == nil || err != nil ||
					row[col["simulated"]] != strconv.FormatBool(*k.Simulated) || row[col["projected_from"]] != from ||
					row[col["full_cycles"]] != strconv.FormatInt(*k.FullCycles, 10) || !near(fe, *k.FullErrorPct) {
					t.Errorf("kernels.csv row %d: %v, want kernel %+v", i, row, k)
				}
			}
			if ch.MeasuredMape == nil || ch.FullMeasuredMape == nil || full.Comparison == nil || !near(*ch.FullMeasuredMape, full.Comparison.Mape) ||
				!near(*ch.MeasuredMape, c.Comparison.Mape) {
				t.Errorf("measured MAPEs %v, %v: want %v, %+v", ptrF(ch.MeasuredMape), ptrF(ch.FullMeasuredMape), c.Comparison, full.Comparison)
			}

			// Segments are left out of run listings unless asked for.
			var l struct {
				Runs struct{ Nodes []struct{ ID string } }
				All  struct{ Nodes []struct{ ID string } } `json:"all"`
			}
			s.MustDo(t, `{ runs(traceId: "`+sampledID+`") { nodes { id } } all: runs(traceId: "`+sampledID+`", segments: true) { nodes { id } } }`, nil, &l)
			if len(l.Runs.Nodes) != 2 || len(l.All.Nodes) != 2+len(sr.Segments) {
				t.Errorf("runs %v, with segments %v: want the sampled and validation runs, then those and %d segments", l.Runs.Nodes, l.All.Nodes, len(sr.Segments))
			}

			// Launched again without rerun, every segment is reused: the
			// sampled run succeeds without a simulation, as projected.
			var again struct{ LaunchRun sampledRunView }
			s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"traceId": sampledID, "simConfig": simconfigtest.H100, "sampling": map[string]any{"plan": plan.ID},
			}}, &again)
			a := waitSampled(t, s, again.LaunchRun.ID, "SUCCEEDED")
			for _, seg := range a.Sampling.Segments {
				if seg.State != "SUCCEEDED" || seg.SameAs == nil {
					t.Errorf("segment launched again, not reused: %+v", seg)
				}
			}
			if a.Sampling.ProjectedCycles == nil || *a.Sampling.ProjectedCycles != *sr.ProjectedCycles || len(a.KernelPage.Nodes) != sampledLaunches {
				t.Errorf("launched again: projected %v, %d kernels", ptrF(a.Sampling.ProjectedCycles), len(a.KernelPage.Nodes))
			}
			if a.Figures.SimCycles == nil || *a.Figures.SimCycles != *r.Figures.SimCycles {
				t.Errorf("launched again: simCycles %v, want %v", cascade.Deref(a.Figures.SimCycles), cascade.Deref(r.Figures.SimCycles))
			}

			// A run of a warmed segment's kernels on their own is no
			// segment: its L2 is not warmed, so the segment's results are
			// not its.
			last := sr.Segments[len(sr.Segments)-1]
			var ids []int
			for _, k := range last.Kernels {
				ids = append(ids, k.KernelID)
			}
			var plain struct {
				LaunchRun struct {
					ID     string
					SameAs *struct{ ID string }
				}
			}
			s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id sameAs { id } } }`, map[string]any{"in": map[string]any{
				"traceId": sampledID, "simConfig": simconfigtest.H100, "kernelIds": ids,
			}}, &plain)
			if plain.LaunchRun.SameAs != nil {
				t.Errorf("a run of kernels %v reused the warmed segment %s", ids, plain.LaunchRun.SameAs.ID)
			}
			waitFull(t, s, plain.LaunchRun.ID)
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func ptrF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

const h100ClockMHz = 1755.0

// writeTraceFiles writes files (paths relative to src) and the launches'
// measured durations as real_timing.json into src.
func writeTraceFiles(t *testing.T, src string, files map[string]string, rows any) {
	t.Helper()
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	files["real_timing.json"] = string(b)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
