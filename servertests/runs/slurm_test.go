package runs_test

// The Slurm executor against a real single-node cluster (package
// slurmtest), with the stand-in simulator as each job's program.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/runs/slurmexec"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// slurmRun is a run with its Slurm job.
type slurmRun struct {
	run
	Executor string
	Slurm    *struct {
		JobID                  int64
		Partition, Node, State string
		Reason                 *string
	}
}

const slurmRunFields = runFields + ` executor slurm { jobId partition node state reason }`

func getSlurm(t *testing.T, s *servertest.TestServer, id string) slurmRun {
	t.Helper()
	var r struct{ Run slurmRun }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+slurmRunFields+` } }`, map[string]any{"id": id}, &r)
	return r.Run
}

// waitSlurm waits for a run to be in one of states, for up to timeout.
func waitSlurm(t *testing.T, s *servertest.TestServer, id string, timeout time.Duration, states ...string) slurmRun {
	t.Helper()
	var r slurmRun
	testkit.Eventually(t, timeout, fmt.Sprintf("run %s in %v", id, states), func() bool {
		r = getSlurm(t, s, id)
		return slices.Contains(states, r.State)
	})
	return r
}

// slurmServer starts a server whose runs are jobs on the test cluster,
// polled every 300 ms, its Slurm commands counted; the simulator is the
// stand-in in the given mode, as for server.
func slurmServer(t *testing.T, mode string, configure ...func(*app.Config)) (*servertest.TestServer, *slurmtest.Cluster, *slurmtest.Calls) {
	t.Helper()
	c := slurmtest.Start(t)
	calls := slurmtest.CountingBin(t)
	s := server(t, mode, append([]func(*app.Config){func(cfg *app.Config) {
		cfg.Executor = "slurm"
		cfg.Slurm = slurm.Config{
			Bin: calls.Dir, Env: []string{"SLURM_CONF=" + c.Conf()},
			PollInterval: 300 * time.Millisecond, Timeout: 5 * time.Second,
		}
	}}, configure...)...)
	return s, c, calls
}

// withSlurmFile writes a cascade-slurm.conf into the config's folder of a
// fresh configs directory, and serves that directory.
func withSlurmFile(t *testing.T, config, text string) func(*app.Config) {
	dir := simconfigtest.Write(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, config, slurmexec.OptionsFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(c *app.Config) { c.SimConfigsDir = dir }
}

func scontrolShowJob(t *testing.T, c *slurmtest.Cluster, id int64) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for _, f := range strings.Fields(c.Command(t, "scontrol", "show", "job", "--oneliner", strconv.FormatInt(id, 10))) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	return fields
}

// jobsNamed counts the jobs Slurm (squeue, and sacct where accounting is
// kept) knows by a run's job name.
func jobsNamed(t *testing.T, c *slurmtest.Cluster, runID string) int {
	t.Helper()
	ids := map[string]bool{}
	for _, l := range strings.Fields(c.Command(t, "squeue", "-h", "--states=all", "-n", slurmexec.JobName(runID), "-o", "%i")) {
		ids[l] = true
	}
	if c.Accounting() {
		for _, l := range strings.Fields(c.Command(t, "sacct", "-n", "-X", "-P", "--starttime=now-1hour", "--name="+slurmexec.JobName(runID), "-o", "JobID")) {
			ids[l] = true
		}
	}
	return len(ids)
}

// TestSlurmLaunchToSucceeded: a run becomes a job with the global and the
// config's options applied, goes QUEUED, RUNNING, SUCCEEDED with its
// progress and results from the job's log, and shows its job id,
// partition and node.
func TestSlurmLaunchToSucceeded(t *testing.T) {
	t.Parallel()
	s, c, calls := slurmServer(t, "slow",
		withSlurmFile(t, simconfigtest.H100, "# a slow config\npartition = long\ntime=5\n"),
		func(cfg *app.Config) { cfg.Slurm.Options.CPUs = 2; cfg.Slurm.Options.MemoryMB = 200 })
	var ex struct {
		Executor struct {
			Kind    string
			Healthy bool
			Message *string
		}
	}
	s.MustDo(t, `{ executor { kind healthy message } }`, nil, &ex)
	if ex.Executor.Kind != "slurm" || !ex.Executor.Healthy || ex.Executor.Message == nil {
		t.Fatalf("executor %+v", ex.Executor)
	}
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { runUpdated(traceId: "qs") { id state progress { kernelsDone } slurm { state } } }`, nil)
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	var states []string
	maxDone := 0
	for {
		var ev struct {
			RunUpdated struct {
				State    string
				Progress struct{ KernelsDone int }
			}
		}
		if err := sub.Next(2*time.Minute, &ev); err != nil {
			t.Fatalf("after %v: %v", states, err)
		}
		if u := ev.RunUpdated; len(states) == 0 || states[len(states)-1] != u.State {
			states = append(states, u.State)
		}
		maxDone = max(maxDone, ev.RunUpdated.Progress.KernelsDone)
		if st := states[len(states)-1]; st != "QUEUED" && st != "RUNNING" {
			break
		}
	}
	got := getSlurm(t, s, r.ID)
	if strings.Join(states, " ") != "QUEUED RUNNING SUCCEEDED" || got.Progress.KernelsDone != 4 || maxDone != 4 {
		t.Fatalf("states %v, kernels done %d (max seen %d), error %v", states, got.Progress.KernelsDone, maxDone, cascadeDeref(got.Error))
	}
	if got.Executor != "slurm" || got.Slurm == nil || got.Slurm.JobID == 0 || got.Slurm.Partition != "long" ||
		got.Slurm.Node != c.Node() || got.Slurm.State != "COMPLETED" || got.Slurm.Reason != nil {
		t.Fatalf("executor %s, job %+v", got.Executor, got.Slurm)
	}
	sizes := quickstartSizes(t, s)
	for i, k := range got.Kernels {
		if k.KernelID != i+1 || *k.SimCycles != 1000*int64(i+1)+sizes[i] {
			t.Fatalf("kernel %d: %+v", i+1, k)
		}
	}
	if got.Comparison == nil || got.Comparison.KernelsCompared != 4 {
		t.Fatalf("comparison %+v", got.Comparison)
	}
	dir := filepath.Join(s.DataDir, "work", "runs", r.ID)
	script, err := os.ReadFile(filepath.Join(dir, "job.sbatch"))
	if err != nil || !bytes.Contains(script, []byte("#SBATCH --job-name=cascade-"+r.ID)) {
		t.Fatalf("job script: %v\n%s", err, script)
	}
	show := scontrolShowJob(t, c, got.Slurm.JobID)
	for k, v := range map[string]string{"Partition": "long", "TimeLimit": "00:05:00", "NumCPUs": "2", "MinMemoryNode": "200M", "WorkDir": dir, "StdOut": filepath.Join(dir, "accel-sim.log")} {
		if show[k] != v {
			t.Errorf("scontrol show job: %s=%q, want %q", k, show[k], v)
		}
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Errorf("%d sbatch calls for one run", n)
	}
	// The job's cost: its wall time (sacct's Elapsed, else from its start
	// to its end), and with accounting sacct's MaxRSS.
	var fig struct {
		Run struct {
			Figures struct {
				WallSeconds  *float64
				PeakRssBytes *int64
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { run(id: $id) { figures { wallSeconds peakRssBytes } } }`, map[string]any{"id": r.ID}, &fig)
	f := fig.Run.Figures
	if f.WallSeconds == nil || *f.WallSeconds <= 0 {
		t.Errorf("wallSeconds %v, want > 0", f.WallSeconds)
	}
	if c.Accounting() && (f.PeakRssBytes == nil || *f.PeakRssBytes <= 0) {
		t.Errorf("peakRssBytes %v with accounting, want sacct's MaxRSS", f.PeakRssBytes)
	}
}

// TestSlurmCancel: a pending job's run is cancelled at once, a running
// one's once Slurm has ended the job; neither is an error. Each job takes
// all 8 CPUs of the node, so the second waits for the first, pending with
// Slurm's reason shown.
func TestSlurmCancel(t *testing.T) {
	t.Parallel()
	s, c, _ := slurmServer(t, "slow", hanging(t), func(cfg *app.Config) { cfg.Slurm.Options.CPUs = 8 })
	a := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	got := waitSlurm(t, s, a.ID, 2*time.Minute, "RUNNING")
	if got.Slurm == nil || got.Slurm.State != "RUNNING" || got.Slurm.Node != c.Node() {
		t.Fatalf("running job %+v", got.Slurm)
	}
	b := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	var pending slurmRun
	testkit.Eventually(t, time.Minute, "second job pending with a reason", func() bool {
		pending = getSlurm(t, s, b.ID)
		return pending.Slurm != nil && pending.Slurm.Reason != nil
	})
	if pending.State != "QUEUED" || pending.Slurm.State != "PENDING" || pending.Slurm.Node != "" {
		t.Fatalf("pending run %s, job %+v", pending.State, pending.Slurm)
	}
	t.Logf("pending: %s", *pending.Slurm.Reason)

	var cb struct{ CancelRun slurmRun }
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { `+slurmRunFields+` } }`, map[string]any{"id": b.ID}, &cb)
	if cb.CancelRun.State != "CANCELLED" || cb.CancelRun.Error != nil || cb.CancelRun.Slurm.State != "CANCELLED" {
		t.Fatalf("cancelled pending run: %s %v, job %+v", cb.CancelRun.State, cascadeDeref(cb.CancelRun.Error), cb.CancelRun.Slurm)
	}
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, map[string]any{"id": a.ID}, nil)
	got = waitSlurm(t, s, a.ID, time.Minute, "CANCELLED", "FAILED", "SUCCEEDED")
	if got.State != "CANCELLED" || got.Error != nil || got.Slurm.State != "CANCELLED" || !strings.Contains(strings.Join(got.History, "\n"), "cancelled while running") {
		t.Fatalf("cancelled running run: %s %v, job %+v, history %q", got.State, cascadeDeref(got.Error), got.Slurm, got.History)
	}
	errs := s.Do(t, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, map[string]any{"id": a.ID}, nil)
	if len(errs) != 1 || errs[0].Code() != "CONFLICT" {
		t.Fatalf("second cancel: %+v", errs)
	}
	for _, id := range []string{a.ID, b.ID} {
		r := getSlurm(t, s, id)
		if st := c.Command(t, "squeue", "-h", "--states=all", "-j", strconv.FormatInt(r.Slurm.JobID, 10), "-o", "%T"); strings.TrimSpace(st) != "CANCELLED" {
			t.Errorf("Slurm says job %d of run %s is %q", r.Slurm.JobID, id, st)
		}
	}
}

// TestSlurmJobEnds: jobs that end badly fail their runs with the
// simulator's line and Slurm's reason in error, keeping partial results,
// and with their failure class (ASSERTION, TIME_LIMIT, OUT_OF_MEMORY), by
// which runs(failureClass:) lists them.
func TestSlurmJobEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, mode string
		configure  func(*testing.T) []func(*app.Config)
		state      string // the job's Slurm state
		class      string // the run's failure class
		asked      string // what its history says the job asked for
		errs       []string
		timeout    time.Duration
	}{
		{name: "failing", mode: "crash", state: "FAILED", class: "ASSERTION", timeout: time.Minute, asked: "the cluster's defaults",
			errs: []string{"simulator exit 134 after 1 of 4 kernels: accel-sim.out: trace_parser.cc", "(Slurm job", "FAILED: NonZeroExitCode, exit 134 on "}},
		// Slurm's limits are whole minutes, enforced every 30 s.
		{name: "time limit", state: "TIMEOUT", class: "TIME_LIMIT", timeout: 3 * time.Minute, asked: "time=1; the rest the cluster's defaults",
			configure: func(t *testing.T) []func(*app.Config) {
				return []func(*app.Config){hanging(t), withSlurmFile(t, simconfigtest.H100, "time=1\n")}
			},
			errs: []string{"hit its time limit (TIMEOUT: TimeLimit", "after 0 of 4 kernels; raise time="}},
		{name: "memory", mode: fakesim.ModeMemory, timeout: 2 * time.Minute, asked: "mem=64M; the rest the cluster's defaults",
			configure: func(t *testing.T) []func(*app.Config) {
				sim := fakesim.Build(t)
				return []func(*app.Config){withSlurmFile(t, simconfigtest.H100, "mem=64M\n"), func(c *app.Config) {
					c.SimCmd = []string{"env", "FAKESIM_MODE=memory", "FAKESIM_MEMORY_MB=400", "FAKESIM_DELAY=5s", sim}
				}}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var configure []func(*app.Config)
			if tc.configure != nil {
				configure = tc.configure(t)
			}
			s, c, _ := slurmServer(t, cmp(tc.mode, "ok"), configure...)
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			got := waitSlurm(t, s, r.ID, tc.timeout, "SUCCEEDED", "FAILED", "CANCELLED")
			state, class, errs := tc.state, tc.class, tc.errs
			if tc.name == "memory" {
				state, class, errs = "OUT_OF_MEMORY", "OUT_OF_MEMORY", []string{"ran out of memory (OUT_OF_MEMORY: OutOfMemory on ", "after 1 of 4 kernels; raise mem="}
				if !c.MemoryByCgroup() { // Slurm's RSS sampler kills it
					state, class, errs = "FAILED", "OTHER", []string{"simulator signal: killed after 1 of 4 kernels", "FAILED", "killed by signal 9"}
				}
			}
			if got.State != "FAILED" || got.Error == nil || got.Slurm == nil || got.Slurm.State != state {
				t.Fatalf("%s, error %v, job %+v; want FAILED, job %s", got.State, cascadeDeref(got.Error), got.Slurm, state)
			}
			for _, e := range errs {
				if !strings.Contains(*got.Error, e) {
					t.Errorf("error %q lacks %q", *got.Error, e)
				}
			}
			if h, want := strings.Join(got.History, "\n"), "submitted to Slurm as job "+fmt.Sprint(got.Slurm.JobID)+", asking for "+tc.asked+"\n"; !strings.Contains(h+"\n", want) {
				t.Errorf("history %q lacks %q", got.History, want)
			}
			if tc.mode != "" && len(got.Kernels) != 1 {
				t.Errorf("partial results: %d kernels, want the first", len(got.Kernels))
			}
			if st := getStats(t, s, r.ID); st.FailureClass == nil || *st.FailureClass != class {
				t.Errorf("failure class %v, want %s", cascadeDeref(st.FailureClass), class)
			}
			var list struct {
				Runs struct{ Nodes []struct{ ID string } }
			}
			s.MustDo(t, `query($c: FailureClass) { runs(failureClass: $c) { nodes { id } } }`, map[string]any{"c": class}, &list)
			if len(list.Runs.Nodes) != 1 || list.Runs.Nodes[0].ID != r.ID {
				t.Errorf("runs(failureClass: %s): %+v", class, list.Runs.Nodes)
			}
		})
	}
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
