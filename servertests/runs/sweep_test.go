package runs_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// uploadCopies uploads the quickstart trace n times, as sw00, sw01, ...,
// and waits until every copy is ready; it returns their ids.
func uploadCopies(t testing.TB, s *servertest.TestServer, n int) []string {
	t.Helper()
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw%02d", i)
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: ids[i]}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, time.Minute+time.Duration(n)*time.Second, fmt.Sprintf("%d copies ready", n), func() bool {
		var r struct {
			Traces struct{ Nodes []struct{ ID string } }
		}
		s.MustDo(t, `{ traces(state: READY, first: 1000) { nodes { id } } }`, nil, &r)
		ready := map[string]bool{}
		for _, tr := range r.Traces.Nodes {
			ready[tr.ID] = true
		}
		for _, id := range ids {
			if !ready[id] {
				return false
			}
		}
		return true
	})
	return ids
}

type sweepProgress struct {
	Total, Done, Queued, Running, Succeeded, Failed, Cancelled int
}

type sweepComparison struct {
	SimConfig                      string
	Runs, Succeeded, Compared      int
	KernelsCompared, StepsCompared int
	Mape, Correlation, StepMape    *float64
}

type sweep struct {
	ID         string
	Label      *string
	TraceIds   []string
	SimConfigs []string
	RunCount   int
	Executor   string
	Progress   sweepProgress
}

const sweepFields = `id label traceIds simConfigs runCount executor
	progress { total done queued running succeeded failed cancelled }`

func launchSweep(t *testing.T, s *servertest.TestServer, traces, configs []string, label string) sweep {
	t.Helper()
	var r struct{ LaunchSweep sweep }
	s.MustDo(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { `+sweepFields+` } }`,
		map[string]any{"in": map[string]any{"traceIds": traces, "simConfigs": configs, "label": label}}, &r)
	return r.LaunchSweep
}

// followSweep reads sweepUpdated until the sweep's runs are all over, and
// returns its last progress and how many messages named a run.
func followSweep(t *testing.T, sub *servertest.Subscription, timeout time.Duration) (sweepProgress, int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	runs := 0
	for {
		var ev struct {
			SweepUpdated struct {
				Sweep struct{ Progress sweepProgress }
				Run   *struct{ ID, State string }
			}
		}
		if err := sub.Next(time.Until(deadline), &ev); err != nil {
			t.Fatalf("sweepUpdated after %d run messages: %v", runs, err)
		}
		if ev.SweepUpdated.Run != nil {
			runs++
		}
		if p := ev.SweepUpdated.Sweep.Progress; p.Total > 0 && p.Done == p.Total {
			return p, runs
		}
	}
}

// TestSweepOf20Runs: a sweep of 10 traces × 2 configs queues 20 runs at
// once, five times the executor's 4 slots, which the local executor runs
// to SUCCEEDED while sweepUpdated pushes the progress; the sweep lists
// its runs, each run names its sweep, and the comparison pools each
// config's runs: the quickstart's copies are alike, so a config's pooled
// MAPE and correlation are those of any one of its runs, over 10 times
// the kernels. (It was 25 × 2: nothing it checks depends on the count,
// and the 30 runs more cost about 7 CPU-seconds a database under -race;
// the sweep of 50 runs issue 13 asks for is TestSlurmSweepOf50Runs's, on
// the real Slurm cluster.)
func TestSweepOf20Runs(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			s := server(t, "ok", func(c *app.Config) { c.DatabaseURL = u; c.RunConcurrency = 4 })
			const copies, runs = 10, 20
			traces := uploadCopies(t, s, copies)
			configs := []string{simconfigtest.H100, simconfigtest.RTX3070}
			sw := launchSweep(t, s, traces, configs, "twenty")
			if sw.RunCount != runs || sw.Progress.Total != runs || sw.Progress.Done == runs || sw.Executor != "local" ||
				len(sw.TraceIds) != copies || sw.SimConfigs[1] != simconfigtest.RTX3070 || sw.Label == nil || *sw.Label != "twenty" {
				t.Fatalf("launched: %+v", sw)
			}
			sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { sweepUpdated(id: $id) {
				sweep { progress { total done queued running succeeded failed cancelled } } run { id state } } }`,
				map[string]any{"id": sw.ID})
			p, pushed := followSweep(t, sub, 3*time.Minute)
			if p.Succeeded != runs || p.Failed != 0 || p.Cancelled != 0 || p.Queued != 0 || p.Running != 0 {
				t.Fatalf("progress at the end: %+v", p)
			}
			if pushed == 0 {
				t.Fatal("sweepUpdated pushed no run's change")
			}

			var q struct {
				Sweep struct {
					Runs struct {
						TotalCount int
						Nodes      []struct {
							ID, State string
							SimConfig struct{ Name string }
							Sweep     struct{ ID string }
						}
					}
					Comparison []sweepComparison
				}
				Sweeps struct{ Nodes []struct{ ID string } }
			}
			s.MustDo(t, `query($id: ID!) { sweep(id: $id) {
				runs(first: 100) { totalCount nodes { id state simConfig { name } sweep { id } } }
				comparison { simConfig runs succeeded compared kernelsCompared mape correlation stepsCompared stepMape } }
				sweeps(first: 5) { nodes { id } } }`, map[string]any{"id": sw.ID}, &q)
			if q.Sweep.Runs.TotalCount != runs || len(q.Sweep.Runs.Nodes) != runs {
				t.Fatalf("sweep runs: %d", q.Sweep.Runs.TotalCount)
			}
			one := map[string]string{} // a run of each config
			for _, r := range q.Sweep.Runs.Nodes {
				if r.State != "SUCCEEDED" || r.Sweep.ID != sw.ID {
					t.Fatalf("run %+v", r)
				}
				one[r.SimConfig.Name] = r.ID
			}
			if len(q.Sweeps.Nodes) != 1 || q.Sweeps.Nodes[0].ID != sw.ID {
				t.Fatalf("sweeps: %+v", q.Sweeps.Nodes)
			}
			if len(q.Sweep.Comparison) != 2 {
				t.Fatalf("comparison: %+v", q.Sweep.Comparison)
			}
			for i, c := range q.Sweep.Comparison {
				r := get(t, s, one[c.SimConfig])
				if c.SimConfig != configs[i] || c.Runs != copies || c.Succeeded != copies || c.Compared != copies || r.Comparison == nil {
					t.Fatalf("config %d: %+v; a run's comparison %+v", i, c, r.Comparison)
				}
				if c.KernelsCompared != copies*r.Comparison.KernelsCompared || c.Mape == nil || math.Abs(*c.Mape-r.Comparison.Mape) > 1e-9 ||
					c.Correlation == nil || r.Comparison.Correlation == nil || math.Abs(*c.Correlation-*r.Comparison.Correlation) > 1e-9 {
					t.Fatalf("%s pooled %+v (mape %v corr %v), one run %+v", c.SimConfig, c, deref(c.Mape), deref(c.Correlation), *r.Comparison)
				}
				// Steps: the mean error of the run's projected steps.
				sum, n := 0.0, 0
				for _, st := range r.Steps {
					if st.ProjectedNs != st.MeasuredNs {
						sum += 100 * math.Abs(st.ProjectedNs-st.MeasuredNs) / st.MeasuredNs
						n++
					}
				}
				if n == 0 || c.StepsCompared != copies*n || c.StepMape == nil || math.Abs(*c.StepMape-sum/float64(n)) > 1e-9 {
					t.Fatalf("%s steps: %d compared, stepMape %v; one run: %d steps, %v", c.SimConfig, c.StepsCompared, deref(c.StepMape), n, sum/float64(n))
				}
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSweepRefusals: a sweep with anything wrong queues nothing, and its
// one error names every problem.
func TestSweepRefusals(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	s.WriteFile(t, "uploading", "traces/kernel-1.trace", []byte("x"))
	testkit.Eventually(t, 5*time.Second, "uploading trace seen", func() bool {
		var r struct{ Trace *struct{ ID string } }
		s.MustDo(t, `{ trace(id: "uploading") { id } }`, nil, &r)
		return r.Trace != nil
	})
	H := simconfigtest.H100
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("t%03d", i)
	}
	cases := []struct {
		name            string
		traces, configs []string
		want            []string
	}{
		{"Empty", []string{}, []string{}, []string{"(2 problems)", "traceIds: empty", "simConfigs: empty"}},
		{"EveryProblem", []string{quickstartID, "nope", "uploading", "sample", quickstartID}, []string{H, "SM99_NOPE", H},
			[]string{"(6 problems)", `traceIds[1]: trace "nope" not found`, `traceIds[2]: trace "uploading" is uploading`,
				`traceIds[3]: "sample" is the sample trace`, `traceIds[4]: "qs" is given twice (also traceIds[0])`,
				`simConfigs[1]: no config "SM99_NOPE" (have`, `simConfigs[2]: "SM90_H100" is given twice (also simConfigs[0])`}},
		{"DidYouMean", []string{quickstartID}, []string{"sm90_h100", "SM7_QV10"},
			[]string{"(2 problems)", `simConfigs[0]: no config "sm90_h100"; did you mean "SM90_H100"?`, `simConfigs[1]: no config "SM7_QV10"; did you mean "SM7_QV100"?`}},
		{"TooMany", many, make100Configs(), []string{"too many runs: 101 traces × 100 configs = 10100; a sweep launches at most 10000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.Do(t, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"traceIds": c.traces, "simConfigs": c.configs}}, nil)
			if len(errs) != 1 || errs[0].Code() != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "nothing queued") {
				t.Fatalf("errors %+v", errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs[0].Message, w) {
					t.Errorf("error does not say %q:\n%s", w, errs[0].Message)
				}
			}
		})
	}
	var r struct {
		Runs   struct{ TotalCount int }
		Sweeps struct{ TotalCount int }
	}
	s.MustDo(t, `{ runs { totalCount } sweeps { totalCount } }`, nil, &r)
	if r.Runs.TotalCount != 0 || r.Sweeps.TotalCount != 0 {
		t.Fatalf("refused sweeps left %d runs and %d sweeps", r.Runs.TotalCount, r.Sweeps.TotalCount)
	}
}

func make100Configs() []string {
	cs := make([]string, 100)
	for i := range cs {
		cs[i] = fmt.Sprintf("C%03d", i)
	}
	return cs
}

// TestCancelSweep: cancelling a sweep cancels its queued runs at once and
// stops its running one; the runs of another sweep go on; a read-only
// token may not cancel.
func TestCancelSweep(t *testing.T) {
	t.Parallel()
	s := server(t, "slow", func(c *app.Config) { c.RunConcurrency = 1 })
	traces := uploadCopies(t, s, 3)
	sw := launchSweep(t, s, traces, []string{simconfigtest.H100, simconfigtest.QV100}, "")
	other := launchSweep(t, s, traces[:1], []string{simconfigtest.H100}, "")
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { sweepUpdated(id: $id) {
		sweep { progress { total done queued running succeeded failed cancelled } } run { id state } } }`,
		map[string]any{"id": sw.ID})
	testkit.Eventually(t, 30*time.Second, "a run of the sweep running", func() bool {
		var r struct{ Sweep sweep }
		s.MustDo(t, `query($id: ID!) { sweep(id: $id) { `+sweepFields+` } }`, map[string]any{"id": sw.ID}, &r)
		return r.Sweep.Progress.Running == 1
	})
	var c struct{ CancelSweep sweep }
	s.MustDo(t, `mutation($id: ID!) { cancelSweep(id: $id) { `+sweepFields+` } }`, map[string]any{"id": sw.ID}, &c)
	if c.CancelSweep.Progress.Queued != 0 || c.CancelSweep.Progress.Cancelled < 5 {
		t.Fatalf("after cancelSweep: %+v", c.CancelSweep.Progress)
	}
	p, _ := followSweep(t, sub, time.Minute)
	if p.Cancelled != 6 || p.Total != 6 {
		t.Fatalf("progress at the end: %+v", p)
	}
	var o struct{ Sweep sweep }
	testkit.Eventually(t, time.Minute, "the other sweep done", func() bool {
		s.MustDo(t, `query($id: ID!) { sweep(id: $id) { `+sweepFields+` } }`, map[string]any{"id": other.ID}, &o)
		return o.Sweep.Progress.Done == 1
	})
	if o.Sweep.Progress.Succeeded != 1 {
		t.Fatalf("the other sweep: %+v", o.Sweep.Progress)
	}
	if errs := s.Do(t, `mutation { cancelSweep(id: "nope") { id } }`, nil, nil); len(errs) != 1 || errs[0].Code() != "NOT_FOUND" {
		t.Fatalf("cancel of an unknown sweep: %+v", errs)
	}
}

// TestSlurmSweepOf50Runs: a sweep of 50 runs on the real Slurm cluster:
// each run is submitted once, as its own job, after the sweep is stored;
// all 50 end SUCCEEDED with their job ids, sweepUpdated following them,
// and the comparison is computed as with the local executor.
func TestSlurmSweepOf50Runs(t *testing.T) {
	t.Parallel()
	s, _, calls := slurmServer(t, "ok")
	traces := uploadCopies(t, s, 25)
	sw := launchSweep(t, s, traces, []string{simconfigtest.H100, simconfigtest.RTX3070}, "")
	if sw.RunCount != 50 || sw.Executor != "slurm" {
		t.Fatalf("launched: %+v", sw)
	}
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { sweepUpdated(id: $id) {
		sweep { progress { total done queued running succeeded failed cancelled } } run { id state } } }`,
		map[string]any{"id": sw.ID})
	p, _ := followSweep(t, sub, 10*time.Minute)
	if p.Succeeded != 50 {
		t.Fatalf("progress at the end: %+v", p)
	}
	var q struct {
		Sweep struct {
			Runs struct {
				Nodes []struct {
					ID    string
					Slurm *struct{ JobID int64 }
				}
			}
			Comparison []sweepComparison
		}
	}
	s.MustDo(t, `query($id: ID!) { sweep(id: $id) { runs(first: 100) { nodes { id slurm { jobId } } }
		comparison { simConfig runs succeeded compared kernelsCompared mape correlation stepsCompared stepMape } } }`,
		map[string]any{"id": sw.ID}, &q)
	jobs := map[int64]bool{}
	for _, r := range q.Sweep.Runs.Nodes {
		if r.Slurm == nil || jobs[r.Slurm.JobID] {
			t.Fatalf("run %s: job %+v (seen: %v)", r.ID, r.Slurm, r.Slurm != nil && jobs[r.Slurm.JobID])
		}
		jobs[r.Slurm.JobID] = true
	}
	if len(jobs) != 50 || calls.Count("sbatch") != 50 {
		t.Fatalf("%d jobs, %d sbatch calls", len(jobs), calls.Count("sbatch"))
	}
	for _, c := range q.Sweep.Comparison {
		if c.Succeeded != 25 || c.Compared != 25 || c.Mape == nil || c.Correlation == nil {
			t.Fatalf("comparison %+v", c)
		}
	}
}

// TestSlurmCancelSweep: cancelling a sweep whose runs are pending Slurm
// jobs (their partition is down) cancels the jobs, with one scancel
// call, and the runs.
func TestSlurmCancelSweep(t *testing.T) {
	t.Parallel()
	s, c, calls := slurmServer(t, "ok", func(cfg *app.Config) { cfg.Slurm.Options.Partition = "long" })
	c.Command(t, "scontrol", "update", "PartitionName=long", "State=DOWN")
	t.Cleanup(func() { c.Try("scontrol", "update", "PartitionName=long", "State=UP") })
	traces := uploadCopies(t, s, 2)
	sw := launchSweep(t, s, traces, []string{simconfigtest.H100, simconfigtest.QV100}, "")
	testkit.Eventually(t, time.Minute, "4 jobs submitted", func() bool { return calls.Count("sbatch") == 4 })
	testkit.Eventually(t, time.Minute, "4 jobs recorded", func() bool {
		var r struct {
			Sweep struct {
				Runs struct {
					Nodes []struct{ Slurm *struct{ JobID int64 } }
				}
			}
		}
		s.MustDo(t, `query($id: ID!) { sweep(id: $id) { runs { nodes { slurm { jobId } } } } }`, map[string]any{"id": sw.ID}, &r)
		n := 0
		for _, x := range r.Sweep.Runs.Nodes {
			if x.Slurm != nil {
				n++
			}
		}
		return n == 4
	})
	scancels := calls.Count("scancel")
	var cs struct{ CancelSweep sweep }
	s.MustDo(t, `mutation($id: ID!) { cancelSweep(id: $id) { `+sweepFields+` } }`, map[string]any{"id": sw.ID}, &cs)
	if p := cs.CancelSweep.Progress; p.Cancelled != 4 {
		t.Fatalf("after cancelSweep: %+v", p)
	}
	if n := calls.Count("scancel") - scancels; n != 1 {
		t.Fatalf("cancelSweep ran scancel %d times for 4 jobs, want once", n)
	}
	var r struct {
		Sweep struct {
			Runs struct{ Nodes []struct{ ID string } }
		}
	}
	s.MustDo(t, `query($id: ID!) { sweep(id: $id) { runs { nodes { id } } } }`, map[string]any{"id": sw.ID}, &r)
	for _, x := range r.Sweep.Runs.Nodes {
		if n := jobsNamed(t, c, x.ID); n != 1 {
			t.Fatalf("run %s: %d jobs", x.ID, n)
		}
		out := c.Command(t, "squeue", "-h", "-n", "cascade-"+x.ID, "-o", "%T")
		if strings.TrimSpace(out) != "" && !strings.Contains(out, "CANCELLED") {
			t.Fatalf("run %s's job is still %q", x.ID, out)
		}
	}
}

// TestSweepMutationsNeedTheReadWriteToken: a read-only token may follow a
// sweep but neither launch nor cancel one.
func TestSweepMutationsNeedTheReadWriteToken(t *testing.T) {
	t.Parallel()
	const ro = "read-only-0123456789"
	s := server(t, "ok", func(c *app.Config) {
		c.Tokens = cascade.Tokens{ReadWrite: "read-write-0123456789", ReadOnly: ro}
	})
	in := map[string]any{"in": map[string]any{"traceIds": []string{quickstartID}, "simConfigs": []string{simconfigtest.H100}}}
	r := s.Post(t, ro, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }`, in)
	if r.Status != 403 || len(r.Errors) != 1 || r.Errors[0].Code() != "FORBIDDEN" || !strings.Contains(r.Errors[0].Message, "launchSweep") {
		t.Fatalf("launchSweep with the read-only token: %d %+v", r.Status, r.Errors)
	}
	sw := launchSweep(t, s, []string{quickstartID}, []string{simconfigtest.H100}, "")
	r = s.Post(t, ro, `mutation($id: ID!) { cancelSweep(id: $id) { id } }`, map[string]any{"id": sw.ID})
	if r.Status != 403 || len(r.Errors) != 1 || r.Errors[0].Code() != "FORBIDDEN" {
		t.Fatalf("cancelSweep with the read-only token: %d %+v", r.Status, r.Errors)
	}
	r = s.Post(t, ro, `query($id: ID!) { sweep(id: $id) { runCount } }`, map[string]any{"id": sw.ID})
	if r.Status != 200 || len(r.Errors) != 0 {
		t.Fatalf("sweep with the read-only token: %d %+v", r.Status, r.Errors)
	}
}
