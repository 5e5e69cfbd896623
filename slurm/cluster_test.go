package slurm_test

// Tests against a real single-node Slurm cluster, started once per test
// process by scripts/slurm.sh (installing Debian's packages when missing) the
// first time a test needs it, and stopped by TestMain.

import (
	"bufio"
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

	"github.com/cascade-sim/cascade/internal/testutil"
	"github.com/cascade-sim/cascade/slurm"
)

// exitCannotInstall is scripts/slurm.sh's exit status when the packages
// are missing and cannot be installed.
const exitCannotInstall = 3

var cluster struct {
	once    sync.Once
	dir     string
	env     map[string]string // what "slurm.sh up" printed: SLURM_CONF, CASCADE_SLURM_*
	skip    string            // why the cluster tests skip
	err     error             // why the cluster did not start
	started bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster.started {
		out, err := exec.Command(slurmScript(), "down", cluster.dir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "slurm.sh down: %v\n%s", err, out)
			code = 1
		}
		os.RemoveAll(cluster.dir)
	}
	os.Exit(code)
}

func slurmScript() string { return filepath.Join(testutil.ModuleRoot(), "scripts", "slurm.sh") }

// startCluster starts the cluster once; every test that needs it calls it.
// Missing packages that cannot be installed skip the test, saying so; a
// cluster that does not start fails it.
func startCluster(t testing.TB) {
	t.Helper()
	cluster.once.Do(func() {
		if testing.Short() {
			cluster.skip = "-short: no Slurm cluster started"
			return
		}
		dir, err := os.MkdirTemp("", "cascade-slurm-")
		if err != nil {
			cluster.err = err
			return
		}
		cluster.dir = dir
		// CASCADE_TEST_SLURM_FLAGS="--no-accounting --no-cgroups" tests
		// the fallbacks: squeue alone, memory limits by RSS sampling.
		args := append([]string{"up", dir}, strings.Fields(os.Getenv("CASCADE_TEST_SLURM_FLAGS"))...)
		cmd := exec.Command(slurmScript(), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == exitCannotInstall:
			cluster.skip = "SKIPPED: Slurm cannot be installed on this machine: " + strings.TrimSpace(stderr.String())
			fmt.Fprintln(os.Stderr, "slurm tests: "+cluster.skip)
			os.RemoveAll(dir)
			return
		case err != nil:
			cluster.started = true // stop whatever did start
			cluster.err = fmt.Errorf("scripts/slurm.sh up: %v\n%s", err, stderr.String())
			return
		}
		cluster.started = true
		cluster.env = map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
				cluster.env[k] = v
			}
		}
	})
	if cluster.skip != "" {
		t.Skip(cluster.skip)
	}
	if cluster.err != nil {
		t.Fatal(cluster.err)
	}
}

// client returns a Client of the test cluster whose commands are counted:
// each goes through a wrapper on PATH that appends its name to a file.
func client(t testing.TB) (*slurm.Client, *calls) {
	t.Helper()
	startCluster(t)
	bin := t.TempDir()
	cs := &calls{file: filepath.Join(bin, "calls")}
	for _, name := range []string{"sbatch", "squeue", "sacct", "scancel", "scontrol"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		wrapper := fmt.Sprintf("#!/bin/sh\necho %s >>%s\nexec %s \"$@\"\n", name, cs.file, real)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &slurm.Client{Bin: bin, Env: []string{"SLURM_CONF=" + cluster.env["SLURM_CONF"]}}
	return c, cs
}

// calls counts the commands a client ran.
type calls struct{ file string }

func (cs *calls) count(name string) int {
	data, err := os.ReadFile(cs.file)
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == name {
			n++
		}
	}
	return n
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
	cmd.Env = append(os.Environ(), "SLURM_CONF="+cluster.env["SLURM_CONF"])
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

	if out, err := exec.Command(slurmScript(), "stop-ctld", cluster.dir).CombinedOutput(); err != nil {
		t.Fatalf("stop-ctld: %v\n%s", err, out)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			exec.Command(slurmScript(), "start-ctld", cluster.dir).Run()
		}
	})
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

	if out, err := exec.Command(slurmScript(), "start-ctld", cluster.dir).CombinedOutput(); err != nil {
		t.Fatalf("start-ctld: %v\n%s", err, out)
	}
	restarted = true
	sts := await(t, c, ids, time.Minute, "all completed after the restart", func(sts map[slurm.JobID]slurm.Status) bool {
		for _, id := range ids {
			if sts[id].State != slurm.Completed {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if sts[id].ExitCode != 0 || sts[id].Node != cluster.env["CASCADE_SLURM_NODE"] {
			t.Errorf("job %d after the restart: %+v", id, sts[id])
		}
	}
}

// TestSubmitCompleted runs the stand-in simulator with every option set,
// checks that Slurm applied each, and that its log is where the job said.
func TestSubmitCompleted(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	sim := testutil.Program(t, "./internal/fakesim/cmd/fakesim")
	root := testutil.ModuleRoot()
	cfg := filepath.Join(root, "samples", "sim-configs", "SM90_H100")
	j := job(t, "cascade-run-1", sim,
		"-trace", filepath.Join(root, "samples", "quickstart", "traces", "kernelslist.g"),
		"-config", filepath.Join(cfg, "gpgpusim.config"), "-config", filepath.Join(cfg, "trace.config"))
	j.Partition, j.TimeLimit, j.MemoryMB, j.CPUs = "long", 90*time.Second, 256, 2
	j.Env = []string{"FAKESIM_MODE=ok"}
	if cluster.env["CASCADE_SLURM_ACCOUNTING"] == "yes" {
		j.Account, j.QOS = "cascade", "normal"
	}
	id := submit(t, c, j)

	st := awaitState(t, c, id, 2*time.Minute, slurm.Completed, slurm.Failed)
	if st.State != slurm.Completed || st.ExitCode != 0 || st.Signal != 0 || st.Reason != "" {
		t.Fatalf("status %+v, want COMPLETED with exit 0", st)
	}
	if st.Node != cluster.env["CASCADE_SLURM_NODE"] || st.Partition != "long" || st.Name != "cascade-run-1" {
		t.Errorf("node %q partition %q name %q, want %q, long, cascade-run-1", st.Node, st.Partition, st.Name, cluster.env["CASCADE_SLURM_NODE"])
	}
	if st.Start.IsZero() || st.End.Before(st.Start) {
		t.Errorf("start %v end %v", st.Start, st.End)
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
	if st.Node != cluster.env["CASCADE_SLURM_NODE"] {
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
	switch cluster.env["CASCADE_SLURM_MEMORY"] {
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
	if got := cs.count("sbatch"); got != 50 {
		t.Errorf("%d sbatch calls for 50 jobs", got)
	}
	deadline := time.Now().Add(3 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for polls := 1; ; polls++ {
		squeues, saccts := cs.count("squeue"), cs.count("sacct")
		sts, err := c.Poll(context.Background(), ids)
		if n := cs.count("squeue") - squeues; n != 1 {
			t.Fatalf("poll %d of 50 jobs ran squeue %d times, want once", polls, n)
		}
		if n := cs.count("sacct") - saccts; n > 1 {
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
				polls, cs.count("squeue"), cs.count("sacct"), cs.count("scontrol"))
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
	testutil.Eventually(t, 3*time.Minute, "squeue forgets the job", func() bool {
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
	before := cs.count("sacct")
	sts, err := c.Poll(context.Background(), []slurm.JobID{id, never})
	if err != nil {
		t.Fatal(err)
	}
	if sts[never].State != slurm.Lost {
		t.Errorf("a job that never was: %+v, want LOST", sts[never])
	}
	if cluster.env["CASCADE_SLURM_ACCOUNTING"] == "yes" {
		st := sts[id]
		// Slurm 22.05's sacct --json writes exit code 0 for every exit
		// (testdata/sacct.json): the code is unknown, not 0.
		if !st.FromAccounting || st.State != slurm.Failed || st.ExitCode != -1 || st.Node != cluster.env["CASCADE_SLURM_NODE"] {
			t.Errorf("forgotten job from sacct: %+v, want FAILED, exit code unknown, on the node", st)
		}
		if got := cs.count("sacct") - before; got != 1 {
			t.Errorf("%d sacct calls for one poll, want 1", got)
		}
	}

	off, offCalls := client(t)
	off.Accounting = slurm.AccountingOff
	sts, err = off.Poll(context.Background(), []slurm.JobID{id})
	if err != nil {
		t.Fatal(err)
	}
	if sts[id].State != slurm.Lost || offCalls.count("sacct") != 0 {
		t.Errorf("without accounting: %+v and %d sacct calls, want LOST and none", sts[id], offCalls.count("sacct"))
	}
}
