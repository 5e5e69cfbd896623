package runs_test

// The Slurm executor against a real single-node cluster (package
// slurmtest), with the stand-in simulator as each job's program.

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/runs/slurmexec"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
	"github.com/cascade-sim/cascade/upload"
)

// TestSlurmControllerRestart stops slurmctld while two runs' jobs run and
// a third is launched: the executor turns unhealthy (query and
// subscription), the runs keep their states, and once the controller is
// back every run finishes, each submitted once. It is not parallel: the
// other tests' jobs would see the outage too.
func TestSlurmControllerRestart(t *testing.T) {
	s, c, calls := slurmServer(t, "slow", func(cfg *app.Config) {
		sim := fakesim.Build(t)
		cfg.SimCmd = []string{"env", "FAKESIM_MODE=slow", "FAKESIM_DELAY=4s", sim}
	})
	health := s.Subscribe(t, "graphql-transport-ws", `subscription { executorUpdated { kind healthy message } }`, nil)
	type status struct {
		ExecutorUpdated struct {
			Kind    string
			Healthy bool
			Message *string
		}
	}
	var first status
	if err := health.Next(10*time.Second, &first); err != nil || !first.ExecutorUpdated.Healthy || first.ExecutorUpdated.Kind != "slurm" {
		t.Fatalf("first executor status %+v, %v", first, err)
	}
	a := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	b := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitSlurm(t, s, a.ID, 2*time.Minute, "RUNNING")
	waitSlurm(t, s, b.ID, 2*time.Minute, "RUNNING")
	pollErrors := func() float64 { return testkit.Scrape(t, s.URL+"/metrics")["cascade_slurm_poll_errors_total"] }
	if n := pollErrors(); n != 0 {
		t.Fatalf("/metrics: %v Slurm poll errors with the controller up", n)
	}

	c.StopController(t)
	var down status
	if err := health.Next(time.Minute, &down); err != nil || down.ExecutorUpdated.Healthy || !strings.Contains(cascadeDeref(down.ExecutorUpdated.Message), "Slurm has not answered since") {
		t.Fatalf("executor status with the controller down: %+v, %v", down, err)
	}
	t.Logf("banner: %s", *down.ExecutorUpdated.Message)
	during := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	// Polls fail meanwhile (each squeue call times out); the runs keep
	// their states through two of them.
	since := calls.Count("squeue")
	testkit.Eventually(t, time.Minute, "two polls with the controller down", func() bool { return calls.Count("squeue") >= since+2 })
	// /metrics counts them (a poll ends in error after its squeue).
	testkit.Eventually(t, time.Minute, "/metrics counting failed polls", func() bool { return pollErrors() >= 1 })
	var ex struct{ Executor struct{ Healthy bool } }
	s.MustDo(t, `{ executor { healthy } }`, nil, &ex)
	if ex.Executor.Healthy {
		t.Fatalf("executor healthy with the controller down")
	}
	for id, want := range map[string]string{a.ID: "RUNNING", b.ID: "RUNNING", during.ID: "QUEUED"} {
		if got := getSlurm(t, s, id); got.State != want || got.Error != nil {
			t.Fatalf("run %s with the controller down: %s %v, want %s", id, got.State, cascadeDeref(got.Error), want)
		}
	}

	c.StartController(t)
	var up status
	for {
		if err := health.Next(2*time.Minute, &up); err != nil {
			t.Fatalf("executor never healthy again: %v", err)
		}
		if up.ExecutorUpdated.Healthy {
			break
		}
	}
	for _, id := range []string{a.ID, b.ID, during.ID} {
		got := waitSlurm(t, s, id, 2*time.Minute, "SUCCEEDED", "FAILED", "CANCELLED")
		if got.State != "SUCCEEDED" || got.Progress.KernelsDone != 4 {
			t.Errorf("run %s: %s %v, %d kernels", id, got.State, cascadeDeref(got.Error), got.Progress.KernelsDone)
		}
		if n := jobsNamed(t, c, id); n != 1 {
			t.Errorf("run %s: %d Slurm jobs", id, n)
		}
	}
}

// TestSlurmPollRecordsStatusesTogether: when many jobs change at once
// (here 30 pending jobs, all held by the administrator in one scontrol
// call), a poll records their new reasons in one database transaction,
// not one per run (30 transactions before): the first poll after a sweep's thousands of
// submissions does not queue thousands of writes. Not parallel: it takes
// the "long" partition down so the jobs stay pending.
func TestSlurmPollRecordsStatusesTogether(t *testing.T) {
	const n = 30
	s, c, calls := slurmServer(t, "ok", func(cfg *app.Config) {
		cfg.Slurm.Options.Partition = "long"
		cfg.Slurm.PollInterval = time.Second // the 30 holds land in a poll or two
	})
	c.Command(t, "scontrol", "update", "PartitionName=long", "State=DOWN")
	t.Cleanup(func() { c.Try("scontrol", "update", "PartitionName=long", "State=UP") })
	for range n {
		launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	}
	var jobs []string
	t.Cleanup(func() {
		if len(jobs) > 0 {
			c.Try("scancel", jobs...)
		}
	})
	// reasons returns the queued runs' job ids and how many of their
	// reasons have the prefix.
	reasons := func(prefix string) ([]string, int) {
		rs, err := s.DB.RunsInState(context.Background(), cascade.RunQueued)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		k := 0
		for _, r := range rs {
			if r.Slurm.JobID != nil {
				ids = append(ids, strconv.FormatInt(*r.Slurm.JobID, 10))
				if r.Slurm.Reason != "" && strings.HasPrefix(r.Slurm.Reason, prefix) {
					k++
				}
			}
		}
		return ids, k
	}
	testkit.Eventually(t, 2*time.Minute, "every job pending with a reason", func() bool {
		var k int
		jobs, k = reasons("")
		return len(jobs) == n && k == n
	})
	writes, squeues := s.DB.WriteTransactions(), calls.Count("squeue")
	c.Command(t, "scontrol", "hold", strings.Join(jobs, ","))
	testkit.Eventually(t, time.Minute, "every hold recorded", func() bool {
		_, k := reasons("JobHeld")
		return k == n
	})
	w, q := s.DB.WriteTransactions()-writes, calls.Count("squeue")-squeues
	t.Logf("%d holds recorded with %d write transactions over %d polls", n, w, q)
	// One transaction a poll with changes; the bound leaves room for a
	// hold that straddles several polls and for other writes, not for one
	// transaction a run.
	if w > n/3 {
		t.Fatalf("%d write transactions recorded %d jobs' new reasons over %d polls; want about one a poll", w, n, q)
	}
}

// TestSlurmCancelDuringOutage: a cancelRun while the controller is down
// is no error and changes nothing yet; the scancel is sent again once
// Slurm answers, and the run ends CANCELLED as Cascade's own cancel. Not
// parallel: it stops the controller.
func TestSlurmCancelDuringOutage(t *testing.T) {
	s, c, calls := slurmServer(t, "slow", hanging(t))
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitSlurm(t, s, r.ID, 2*time.Minute, "RUNNING")
	c.StopController(t)
	var cr struct{ CancelRun slurmRun }
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { `+slurmRunFields+` } }`, map[string]any{"id": r.ID}, &cr)
	if cr.CancelRun.State != "RUNNING" || !strings.Contains(strings.Join(cr.CancelRun.History, "\n"), "cancel requested: scancel of Slurm job") {
		t.Fatalf("cancel with the controller down: %s, history %q", cr.CancelRun.State, cr.CancelRun.History)
	}
	since := calls.Count("scancel")
	testkit.Eventually(t, time.Minute, "scancel tried again", func() bool { return calls.Count("scancel") > since })
	if got := getSlurm(t, s, r.ID); got.State != "RUNNING" {
		t.Fatalf("run %s with the controller down, want RUNNING", got.State)
	}
	c.StartController(t)
	got := waitSlurm(t, s, r.ID, 2*time.Minute, "CANCELLED", "FAILED", "SUCCEEDED")
	if got.State != "CANCELLED" || got.Error != nil || got.Slurm.State != "CANCELLED" {
		t.Fatalf("%s %v, job %+v; want CANCELLED, no error", got.State, cascadeDeref(got.Error), got.Slurm)
	}
}

// TestSlurmAdoptsAnUnrecordedJob: a job submitted for a run whose job id
// was never stored (the server stopped between sbatch and the write; here
// the job is submitted by hand with the run's name while the controller
// was down for the server) is found by name at the next start and
// followed, not submitted again. Not parallel: it stops the controller.
func TestSlurmAdoptsAnUnrecordedJob(t *testing.T) {
	dir := t.TempDir()
	s, c, calls := slurmServer(t, "ok", func(cfg *app.Config) { cfg.DataDir = dir })
	c.StopController(t)
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	// sbatch fails: the controller does not answer.
	testkit.Eventually(t, time.Minute, "sbatch tried", func() bool { return calls.Count("sbatch") > 0 })
	s.Close()
	if got := calls.Count("sbatch"); got != 1 {
		t.Fatalf("%d sbatch calls with the controller down", got)
	}
	c.StartController(t)
	// The run's directory and script are there from the failed submission.
	script := filepath.Join(dir, "work", "runs", r.ID, "job.sbatch")
	id := strings.TrimSpace(c.Command(t, "sbatch", "--parsable", script))

	s2, _, calls2 := slurmServer(t, "ok", func(cfg *app.Config) { cfg.DataDir = dir })
	got := waitSlurm(t, s2, r.ID, 2*time.Minute, "SUCCEEDED", "FAILED", "CANCELLED")
	if got.State != "SUCCEEDED" || got.Slurm == nil || strconv.FormatInt(got.Slurm.JobID, 10) != id {
		t.Fatalf("%s %v, job %+v; want SUCCEEDED as job %s", got.State, cascadeDeref(got.Error), got.Slurm, id)
	}
	if !strings.Contains(strings.Join(got.History, "\n"), "found its Slurm job "+id) {
		t.Errorf("history %q", got.History)
	}
	if n := calls2.Count("sbatch"); n != 0 {
		t.Errorf("the run was submitted again (%d sbatch calls)", n)
	}
}

// TestSlurmAdoptsAnUnrecordedJobSqueueForgot: as
// TestSlurmAdoptsAnUnrecordedJob, but the job ran to its end and left
// squeue (MinJobAge, 30 s on the test cluster) before the server started
// again: sacct finds it by the run's name, and it is adopted and its run
// recorded from its log, not submitted again. Not parallel: it stops the
// controller.
func TestSlurmAdoptsAnUnrecordedJobSqueueForgot(t *testing.T) {
	dir := t.TempDir()
	s, c, calls := slurmServer(t, "ok", func(cfg *app.Config) { cfg.DataDir = dir })
	if !c.Accounting() {
		t.Skip("the cluster keeps no accounting: nothing knows a job squeue forgot")
	}
	c.StopController(t)
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	testkit.Eventually(t, time.Minute, "sbatch tried", func() bool { return calls.Count("sbatch") > 0 })
	s.Close()
	c.StartController(t)
	script := filepath.Join(dir, "work", "runs", r.ID, "job.sbatch")
	id := strings.TrimSpace(c.Command(t, "sbatch", "--parsable", script))
	testkit.Eventually(t, 3*time.Minute, "the job ended and squeue forgot it", func() bool {
		out, err := c.Try("squeue", "-h", "--states=all", "-j", id, "-o", "%i")
		return strings.TrimSpace(out) == "" && (err == nil || strings.Contains(err.Error(), "Invalid job id"))
	})

	s2, _, calls2 := slurmServer(t, "ok", func(cfg *app.Config) { cfg.DataDir = dir })
	got := waitSlurm(t, s2, r.ID, 2*time.Minute, "SUCCEEDED", "FAILED", "CANCELLED")
	if got.State != "SUCCEEDED" || got.Slurm == nil || strconv.FormatInt(got.Slurm.JobID, 10) != id || got.Slurm.State != "COMPLETED" {
		t.Fatalf("%s %v, job %+v; want SUCCEEDED as job %s", got.State, cascadeDeref(got.Error), got.Slurm, id)
	}
	if !strings.Contains(strings.Join(got.History, "\n"), "found its Slurm job "+id) {
		t.Errorf("history %q", got.History)
	}
	if n := calls2.Count("sbatch"); n != 0 {
		t.Errorf("the run was submitted again (%d sbatch calls)", n)
	}
	if n := jobsNamed(t, c, r.ID); n != 1 {
		t.Errorf("%d jobs named for the run", n)
	}
}

// TestSlurmServerKilled SIGKILLs `cascade serve` while a job runs, lets
// the job finish meanwhile, and starts the server again: it reattaches by
// the stored job id, reads the whole log, and records the run once,
// submitted once. The server says at start what it found of the cluster.
func TestSlurmServerKilled(t *testing.T) {
	t.Parallel()
	c := slurmtest.Start(t)
	calls := slurmtest.CountingBin(t)
	dir := t.TempDir()
	env := []string{
		"CASCADE_EXECUTOR=slurm", "CASCADE_SLURM_BIN=" + calls.Dir, "SLURM_CONF=" + c.Conf(),
		"CASCADE_SLURM_POLL_INTERVAL=300ms", "CASCADE_SLURM_TIMEOUT=5s",
		"CASCADE_SIM_CMD=env FAKESIM_MODE=slow FAKESIM_DELAY=2s " + fakesim.Build(t),
		"CASCADE_SIM_CONFIGS_DIR=" + simconfigtest.Write(t, t.TempDir()),
	}
	addr, server, out := serveProcess(t, dir, env...)
	// Printed once the server is ready.
	for _, want := range []string{"cascade: Slurm: the controller answers", "cascade: Slurm: run directories " + filepath.Join(dir, "work", "runs") + ": "} {
		testkit.Eventually(t, 10*time.Second, "serve prints "+want, func() bool { return strings.Contains(out.String(), want) })
	}
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: filepath.Join(dir, "s3", "cascade", "traces"), RunName: "qs"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "trace ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		gqlAt(t, addr, `{ trace(id: "qs") { state } }`, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	var l struct{ LaunchRun struct{ ID string } }
	gqlAt(t, addr, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { id } }`, &l)
	id := l.LaunchRun.ID
	type row struct {
		Run struct {
			State    string
			Error    *string
			History  []string
			Progress struct{ KernelsDone int }
			Kernels  []struct{ KernelID int }
			Slurm    *struct {
				JobID int64
				State string
			}
		}
	}
	var r row
	testkit.Eventually(t, 2*time.Minute, "run running with a kernel done", func() bool {
		gqlAt(t, addr, `{ run(id: "`+id+`") { state progress { kernelsDone } slurm { jobId state } } }`, &r)
		return r.Run.State == "RUNNING" && r.Run.Progress.KernelsDone >= 1
	})
	job := strconv.FormatInt(r.Run.Slurm.JobID, 10)
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()
	testkit.Eventually(t, 2*time.Minute, "job completed while the server was down", func() bool {
		return strings.TrimSpace(c.Command(t, "squeue", "-h", "--states=all", "-j", job, "-o", "%T")) == "COMPLETED"
	})

	addr, _, out = serveProcess(t, dir, env...)
	testkit.Eventually(t, time.Minute, "run recorded after the restart", func() bool {
		gqlAt(t, addr, `{ run(id: "`+id+`") { state error history progress { kernelsDone } kernels { kernelId } slurm { jobId state } } }`, &r)
		return r.Run.State != "RUNNING" && r.Run.State != "QUEUED"
	})
	if r.Run.State != "SUCCEEDED" || r.Run.Progress.KernelsDone != 4 || len(r.Run.Kernels) != 4 || r.Run.Slurm.State != "COMPLETED" {
		t.Fatalf("after the restart: %+v, error %v", r.Run, cascadeDeref(r.Run.Error))
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Errorf("%d sbatch calls for one run across the restart", n)
	}
	if n := jobsNamed(t, c, id); n != 1 {
		t.Errorf("%d jobs named for the run", n)
	}
	submitted := 0
	for _, h := range r.Run.History {
		if strings.Contains(h, "submitted to Slurm as job "+job) {
			submitted++
		}
	}
	if submitted != 1 || len(r.Run.History) != 1 {
		t.Errorf("history %q", r.Run.History)
	}
	if !strings.Contains(out.String(), "reattached to Slurm job") {
		t.Errorf("the restarted server does not say it reattached:\n%s", out)
	}
}

// TestSlurmJobLostWhileDown: a job Slurm forgot while the server was down,
// on a cluster whose accounting Cascade does not ask, fails its run as
// lost, with what is known: the last state seen and the log's progress.
func TestSlurmJobLostWhileDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	off := func(cfg *app.Config) { cfg.DataDir, cfg.Slurm.Accounting = dir, slurm.AccountingOff }
	s, c, _ := slurmServer(t, "slow", hanging(t), off)
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	got := waitSlurm(t, s, r.ID, 2*time.Minute, "RUNNING")
	s.Close()
	job := strconv.FormatInt(got.Slurm.JobID, 10)
	c.Command(t, "scancel", job)
	// squeue forgets an ended job after MinJobAge, 30 s on the test cluster.
	testkit.Eventually(t, 3*time.Minute, "squeue forgot the job", func() bool {
		out, err := c.Try("squeue", "-h", "--states=all", "-j", job, "-o", "%i")
		return strings.TrimSpace(out) == "" && (err == nil || strings.Contains(err.Error(), "Invalid job id"))
	})

	s2, _, _ := slurmServer(t, "ok", off)
	got = waitSlurm(t, s2, r.ID, time.Minute, "FAILED", "SUCCEEDED", "CANCELLED")
	want := fmt.Sprintf("lost: Slurm no longer knows job %s (last seen RUNNING on %s;", job, c.Node())
	if got.State != "FAILED" || !strings.HasPrefix(cascadeDeref(got.Error), want) || !strings.Contains(*got.Error, "0 of 4 kernels done") || got.Slurm.State != "LOST" {
		t.Fatalf("%s: %v, job %+v; want FAILED with %q", got.State, cascadeDeref(got.Error), got.Slurm, want)
	}
}

// TestSlurmBadOptionsFile: a config whose cascade-slurm.conf does not
// read refuses launches, naming the file, line and option; the server
// keeps serving the other configs.
func TestSlurmBadOptionsFile(t *testing.T) {
	t.Parallel()
	s, _, calls := slurmServer(t, "ok", withSlurmFile(t, simconfigtest.TitanX, "partition=long\nmem=lots\n"))
	errs := s.Do(t, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM6_TITANX"}) { id } }`, nil, nil)
	want := filepath.Join(simconfigtest.TitanX, slurmexec.OptionsFile) + ":2: mem=lots: want megabytes"
	if len(errs) != 1 || errs[0].Code() != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, want) {
		t.Fatalf("errors %+v, want BAD_USER_INPUT with %q", errs, want)
	}
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	if got := waitSlurm(t, s, r.ID, 2*time.Minute, "SUCCEEDED", "FAILED"); got.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", got.State, cascadeDeref(got.Error))
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Fatalf("%d sbatch calls", n)
	}
}

// serveProcess starts `cascade serve` as its own process on a fresh port,
// without the S3 endpoint; out collects what it prints.
func serveProcess(t *testing.T, dataDir string, env ...string) (addr string, cmd *exec.Cmd, out *testkit.SyncBuffer) {
	t.Helper()
	return testkit.ServeProcess(t, dataDir, append([]string{"CASCADE_S3_ADDR=off"}, env...)...)
}

func gqlAt(t *testing.T, addr, query string, out any) {
	t.Helper()
	s := &servertest.TestServer{Main: &app.Main{URL: "http://" + addr}}
	s.MustDo(t, query, nil, out)
}
