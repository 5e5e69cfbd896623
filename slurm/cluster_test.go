package slurm_test

// Tests against a real single-node Slurm cluster (package slurmtest).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

func TestMain(m *testing.M) { slurmtest.Main(m) }

// cluster is the test cluster, once a test has started it.
var (
	cluster     *slurmtest.Cluster
	clusterOnce sync.Once
)

func startCluster(tb testing.TB) {
	tb.Helper()
	c := slurmtest.Start(tb)
	clusterOnce.Do(func() { cluster = c })
}

// client returns a Client of the test cluster whose commands are counted.
func client(t testing.TB) (*slurm.Client, *slurmtest.Calls) {
	t.Helper()
	startCluster(t)
	cs := slurmtest.CountingBin(t)
	return &slurm.Client{Config: slurm.Config{Bin: cs.Dir, Env: []string{"SLURM_CONF=" + cluster.Conf()}}}, cs
}

// job returns a Job running command in a fresh directory whose name has a
// blank, as users' data directories may.
func job(t testing.TB, name string, command ...string) slurm.Job {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return slurm.Job{Name: name, Dir: dir, Log: filepath.Join(dir, "sim.log"), Command: command}
}

func submit(t testing.TB, c *slurm.Client, j slurm.Job) slurm.JobID {
	t.Helper()
	id, err := c.Submit(context.Background(), j)
	if err != nil {
		t.Fatalf("submit %s: %v", j.Name, err)
	}
	return id
}

// await polls the jobs every 250 ms until done says so of the statuses,
// for at most timeout. A poll that fails with ErrUnavailable is retried,
// as the executor will; any other error fails the test.
func await(t testing.TB, c *slurm.Client, ids []slurm.JobID, timeout time.Duration, what string, done func(map[slurm.JobID]slurm.Status) bool) map[slurm.JobID]slurm.Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last map[slurm.JobID]slurm.Status
	var lastErr error
	for {
		sts, err := c.Poll(context.Background(), ids)
		switch {
		case err == nil:
			last = sts
			if done(sts) {
				return sts
			}
		case errors.Is(err, slurm.ErrUnavailable):
			lastErr = err
		default:
			t.Fatalf("poll: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s; last statuses %+v, last error %v", timeout, what, last, lastErr)
		}
		<-tick.C
	}
}

func awaitState(t testing.TB, c *slurm.Client, id slurm.JobID, timeout time.Duration, states ...slurm.State) slurm.Status {
	t.Helper()
	sts := await(t, c, []slurm.JobID{id}, timeout, fmt.Sprintf("job %d in %v", id, states), func(sts map[slurm.JobID]slurm.Status) bool {
		for _, s := range states {
			if sts[id].State == s {
				return true
			}
		}
		return false
	})
	return sts[id]
}

// scontrolShowJob returns `scontrol show job`'s fields of one job.
func scontrolShowJob(t *testing.T, id slurm.JobID) map[string]string {
	t.Helper()
	cmd := exec.Command("scontrol", "show", "job", "--oneliner", id.String())
	cmd.Env = append(os.Environ(), "SLURM_CONF="+cluster.Conf())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scontrol show job %d: %v", id, err)
	}
	fields := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	return fields
}

// TestControllerRestart stops slurmctld while jobs run: polls and
// submissions fail with ErrUnavailable (not as job failures), and once it is
// back the same jobs are polled to their end. It runs before the parallel
// tests, which would otherwise see the outage too.
func TestControllerRestart(t *testing.T) {
	c, _ := client(t)
	c.Timeout = 5 * time.Second
	var pollErrors atomic.Int64
	c.PollFailed = func(err error) {
		if !errors.Is(err, slurm.ErrUnavailable) {
			t.Errorf("PollFailed given %v, want ErrUnavailable", err)
		}
		pollErrors.Add(1)
	}
	var ids []slurm.JobID
	for i := range 3 {
		ids = append(ids, submit(t, c, job(t, fmt.Sprintf("restart-%d", i), "sleep", "6")))
	}
	await(t, c, ids, time.Minute, "all running", func(sts map[slurm.JobID]slurm.Status) bool {
		for _, id := range ids {
			if sts[id].State != slurm.Running {
				return false
			}
		}
		return true
	})
	if n := pollErrors.Load(); n != 0 {
		t.Fatalf("PollFailed called %d times with the controller up", n)
	}

	cluster.StopController(t)
	if _, err := c.Poll(context.Background(), ids); !errors.Is(err, slurm.ErrUnavailable) {
		t.Fatalf("poll with the controller down: got %v, want ErrUnavailable", err)
	}
	if n := pollErrors.Load(); n != 1 {
		t.Fatalf("PollFailed called %d times after one failed poll, want 1", n)
	}
	if _, err := c.Submit(context.Background(), job(t, "during-outage", "true")); !errors.Is(err, slurm.ErrUnavailable) {
		t.Fatalf("submit with the controller down: got %v, want ErrUnavailable", err)
	}
	if err := c.Cancel(context.Background(), 999999); !errors.Is(err, slurm.ErrUnavailable) {
		t.Fatalf("cancel with the controller down: got %v, want ErrUnavailable", err)
	}

	cluster.StartController(t)
	sts := await(t, c, ids, time.Minute, "all completed after the restart", func(sts map[slurm.JobID]slurm.Status) bool {
		for _, id := range ids {
			if sts[id].State != slurm.Completed {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if sts[id].ExitCode != 0 || sts[id].Node != cluster.Node() {
			t.Errorf("job %d after the restart: %+v", id, sts[id])
		}
	}
}

// TestSubmitCompleted runs the stand-in simulator with every option set,
// checks that Slurm applied each, and that its log is where the job said.
func TestSubmitCompleted(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	sim := testkit.Program(t, "./testkit/fakesim/cmd/fakesim")
	root := testkit.ModuleRoot()
	cfg := filepath.Join(root, "samples", "sim-configs", "SM90_H100")
	j := job(t, "cascade-run-1", sim,
		"-trace", filepath.Join(root, "samples", "quickstart", "traces", "kernelslist.g"),
		"-config", filepath.Join(cfg, "gpgpusim.config"), "-config", filepath.Join(cfg, "trace.config"))
	j.Partition, j.TimeLimit, j.MemoryMB, j.CPUs = "long", 90*time.Second, 256, 2
	j.Env = []string{"FAKESIM_MODE=ok"}
	if cluster.Accounting() {
		j.Account, j.QOS = "cascade", "normal"
	}
	id := submit(t, c, j)

	st := awaitState(t, c, id, 2*time.Minute, slurm.Completed, slurm.Failed)
	if st.State != slurm.Completed || st.ExitCode != 0 || st.Signal != 0 || st.Reason != "" {
		t.Fatalf("status %+v, want COMPLETED with exit 0", st)
	}
	if st.Node != cluster.Node() || st.Partition != "long" || st.Name != "cascade-run-1" {
		t.Errorf("node %q partition %q name %q, want %q, long, cascade-run-1", st.Node, st.Partition, st.Name, cluster.Node())
	}
	if st.Start.IsZero() || st.End.Before(st.Start) {
		t.Errorf("start %v end %v", st.Start, st.End)
	}
	if cluster.Accounting() {
		// squeue shows the end; sacct adds the job's usage, once
		// slurmdbd has its batch step's.
		testkit.Eventually(t, time.Minute, "sacct's MaxRSS and Elapsed of the ended job", func() bool {
			sts, err := c.Poll(context.Background(), []slurm.JobID{id})
			st = sts[id]
			return err == nil && st.MaxRSS > 0
		})
		t.Logf("MaxRSS %d, Elapsed %v", st.MaxRSS, st.Elapsed)
	}
	log, err := os.ReadFile(j.Log)
	if err != nil || !bytes.Contains(log, []byte("GPGPU-Sim: *** exit detected ***")) {
		t.Errorf("log %s: %v\n%s", j.Log, err, log)
	}
	show := scontrolShowJob(t, id)
	want := map[string]string{"NumCPUs": "2", "TimeLimit": "00:02:00", "Partition": "long",
		"WorkDir": j.Dir, "StdOut": j.Log, "Requeue": "0", "MinMemoryNode": "256M"}
	if j.Account != "" {
		want["Account"], want["QOS"] = "cascade", "normal"
	}
	for k, v := range want {
		// WorkDir and StdOut hold a blank, which splits scontrol's line.
		if got := show[k]; got != v && !strings.HasPrefix(v, got+" ") {
			t.Errorf("scontrol show job: %s=%q, want %q", k, got, v)
		}
	}
}

func TestFailingJob(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	id := submit(t, c, job(t, "fails", "sh", "-c", "echo going down; exit 3"))
	st := awaitState(t, c, id, time.Minute, slurm.Failed, slurm.Completed)
	if st.State != slurm.Failed || st.ExitCode != 3 || st.Reason != "NonZeroExitCode" {
		t.Fatalf("status %+v, want FAILED, exit 3, NonZeroExitCode", st)
	}
	if got := st.Describe(); !strings.Contains(got, "exit 3") {
		t.Errorf("Describe() = %q, want it to name exit 3", got)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	id := submit(t, c, job(t, "cancelled", "sleep", "300"))
	awaitState(t, c, id, time.Minute, slurm.Running)
	if err := c.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	st := awaitState(t, c, id, time.Minute, slurm.Cancelled)
	if st.Node != cluster.Node() {
		t.Errorf("cancelled job's node %q", st.Node)
	}
	if err := c.Cancel(context.Background(), id); err != nil {
		t.Errorf("cancelling an ended job again: %v", err)
	}
}

// TestCancelPending cancels a held job: it never ran, so it has no node.
func TestCancelPending(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	j := job(t, "held", "true")
	j.Hold = true
	id := submit(t, c, j)
	st := awaitState(t, c, id, time.Minute, slurm.Pending)
	if st.Reason != "JobHeldUser" || st.Node != "" {
		t.Fatalf("held job: %+v, want PENDING (JobHeldUser) on no node", st)
	}
	if err := c.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	awaitState(t, c, id, time.Minute, slurm.Cancelled)
}

func TestTimeLimit(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	j := job(t, "too-slow", "sleep", "600")
	j.TimeLimit = time.Second // rounded up to a minute, Slurm's least
	id := submit(t, c, j)
	// Slurm enforces limits every 30 s: a 1-minute job ends within 2.
	st := awaitState(t, c, id, 3*time.Minute, slurm.Timeout, slurm.Failed, slurm.Cancelled, slurm.Completed)
	if st.State != slurm.Timeout || st.Reason != "TimeLimit" {
		t.Fatalf("status %+v, want TIMEOUT (TimeLimit)", st)
	}
}

// TestMemoryLimit runs a job that takes 400 MB with 64 MB allowed. With
// cgroups (as here) Slurm's OOM handling ends it OUT_OF_MEMORY; without, the
// RSS sampler kills it and it ends FAILED by signal 9 (scripts/slurm.sh).
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	j := job(t, "greedy", "sh", "-c", "(head -c 400000000 /dev/zero; sleep 3) | tail >/dev/null")
	j.MemoryMB = 64
	id := submit(t, c, j)
	st := awaitState(t, c, id, time.Minute, slurm.OutOfMemory, slurm.Failed, slurm.Completed)
	switch cluster.Env["CASCADE_SLURM_MEMORY"] {
	case "cgroup":
		if st.State != slurm.OutOfMemory || st.Reason != "OutOfMemory" {
			t.Fatalf("status %+v, want OUT_OF_MEMORY (OutOfMemory)", st)
		}
	default:
		if st.State != slurm.Failed || st.Signal != 9 {
			t.Fatalf("status %+v, want FAILED by signal 9", st)
		}
	}
}

func TestRejected(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	j := job(t, "nowhere", "true")
	j.Partition = "nope"
	_, err := c.Submit(context.Background(), j)
	if !errors.Is(err, slurm.ErrRejected) || errors.Is(err, slurm.ErrUnavailable) || !strings.Contains(err.Error(), "partition") {
		t.Fatalf("submit to partition nope: %v, want ErrRejected naming the partition", err)
	}
}

// TestManyJobs polls 50 jobs to their end with one squeue call per poll
// (and at most one sacct call, for jobs squeue has forgotten).
func TestManyJobs(t *testing.T) {
	t.Parallel()
	c, cs := client(t)
	var ids []slurm.JobID
	for i := range 50 {
		ids = append(ids, submit(t, c, job(t, fmt.Sprintf("many-%d", i), "sh", "-c", "exit 0")))
	}
	if got := cs.Count("sbatch"); got != 50 {
		t.Errorf("%d sbatch calls for 50 jobs", got)
	}
	deadline := time.Now().Add(3 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for polls := 1; ; polls++ {
		squeues, saccts := cs.Count("squeue"), cs.Count("sacct")
		sts, err := c.Poll(context.Background(), ids)
		if n := cs.Count("squeue") - squeues; n != 1 {
			t.Fatalf("poll %d of 50 jobs ran squeue %d times, want once", polls, n)
		}
		if n := cs.Count("sacct") - saccts; n > 1 {
			t.Fatalf("poll %d of 50 jobs ran sacct %d times, want once at most", polls, n)
		}
		if err != nil && !errors.Is(err, slurm.ErrUnavailable) {
			t.Fatal(err)
		}
		done := err == nil
		for _, id := range ids {
			done = done && sts[id].State.Done()
		}
		if done {
			for _, id := range ids {
				if sts[id].State != slurm.Completed {
					t.Errorf("job %d: %+v", id, sts[id])
				}
			}
			t.Logf("50 jobs done after %d polls: %d squeue, %d sacct, %d scontrol calls",
				polls, cs.Count("squeue"), cs.Count("sacct"), cs.Count("scontrol"))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("50 jobs not done within 3 minutes; last poll: %v", err)
		}
		<-tick.C
	}
}

// TestForgottenJob polls a job after squeue has forgotten it (MinJobAge is
// 30 s on the test cluster): with accounting sacct answers, one call for all
// such jobs; without, the job is Lost, and so is a job that never was.
func TestForgottenJob(t *testing.T) {
	t.Parallel()
	c, cs := client(t)
	id := submit(t, c, job(t, "forgotten", "sh", "-c", "exit 4"))
	awaitState(t, c, id, time.Minute, slurm.Failed)
	testkit.Eventually(t, 3*time.Minute, "squeue forgets the job", func() bool {
		all, err := c.Queue(context.Background())
		if err != nil {
			return false
		}
		for _, st := range all {
			if st.ID == id {
				return false
			}
		}
		return true
	})
	const never = slurm.JobID(987654)
	before := cs.Count("sacct")
	sts, err := c.Poll(context.Background(), []slurm.JobID{id, never})
	if err != nil {
		t.Fatal(err)
	}
	if sts[never].State != slurm.Lost {
		t.Errorf("a job that never was: %+v, want LOST", sts[never])
	}
	if cluster.Accounting() {
		st := sts[id]
		// Slurm 22.05's sacct --json writes exit code 0 for every exit
		// (testdata/sacct.json): the code is unknown, not 0.
		if !st.FromAccounting || st.State != slurm.Failed || st.ExitCode != -1 || st.Node != cluster.Node() {
			t.Errorf("forgotten job from sacct: %+v, want FAILED, exit code unknown, on the node", st)
		}
		if got := cs.Count("sacct") - before; got != 1 {
			t.Errorf("%d sacct calls for one poll, want 1", got)
		}
	}

	off, offCalls := client(t)
	off.Accounting = slurm.AccountingOff
	sts, err = off.Poll(context.Background(), []slurm.JobID{id})
	if err != nil {
		t.Fatal(err)
	}
	if sts[id].State != slurm.Lost || offCalls.Count("sacct") != 0 {
		t.Errorf("without accounting: %+v and %d sacct calls, want LOST and none", sts[id], offCalls.Count("sacct"))
	}
}

// TestAccountedByName: sacct finds an ended job by its name (as the
// executor finds one whose id it never heard), and nothing of other names.
func TestAccountedByName(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	if !cluster.Accounting() {
		t.Skip("the cluster keeps no accounting")
	}
	a := submit(t, c, job(t, "cascade-byname-a", "true"))
	b := submit(t, c, job(t, "cascade-byname-b", "true"))
	await(t, c, []slurm.JobID{a, b}, 2*time.Minute, "both jobs ended", func(sts map[slurm.JobID]slurm.Status) bool {
		return sts[a].State.Done() && sts[b].State.Done()
	})
	var sts []slurm.Status
	testkit.Eventually(t, time.Minute, "sacct knows job a ended", func() bool {
		var err error
		sts, err = c.AccountedByName(context.Background(), []string{"cascade-byname-a", "cascade-byname-none"})
		if err != nil {
			t.Fatal(err)
		}
		return len(sts) > 0 && sts[0].State.Done()
	})
	if len(sts) != 1 || sts[0].ID != a || sts[0].Name != "cascade-byname-a" || sts[0].State != slurm.Completed || !sts[0].FromAccounting {
		t.Fatalf("sacct by name: %+v, want job %d alone, COMPLETED", sts, a)
	}
}
