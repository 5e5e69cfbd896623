package runs_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// arrayServer starts a sampled-run server on the Slurm executor whose
// Slurm commands are logged (calls).
func arrayServer(t *testing.T, env ...string) (*servertest.TestServer, *slurmtest.Calls) {
	t.Helper()
	c := slurmtest.Start(t)
	calls := slurmtest.CountingBin(t)
	s := sampledServer(t, "", env, func(cfg *app.Config) {
		cfg.Executor = "slurm"
		cfg.Slurm = slurm.Config{Bin: calls.Dir, Env: []string{"SLURM_CONF=" + c.Conf()}, PollInterval: 300 * time.Millisecond, Timeout: 5 * time.Second}
	})
	return s, calls
}

// segmentJob is what a segment shows of its Slurm job.
type segmentJob struct {
	ID, State string
	Slurm     *struct {
		JobID       int64
		ArrayTaskID *int
		Ref, State  string
	}
}

func segmentJobs(t *testing.T, s *servertest.TestServer, id string) []segmentJob {
	t.Helper()
	var out struct {
		Run struct {
			Slurm *struct{ JobID int64 }
			Split struct{ Segments []segmentJob }
		}
	}
	s.MustDo(t, `query($id: ID!) { run(id: $id) { slurm { jobId } split { segments { id state slurm { jobId arrayTaskId ref state } } } } }`, map[string]any{"id": id}, &out)
	if out.Run.Slurm != nil {
		t.Errorf("the split run %s has a job of its own: %+v", id, out.Run.Slurm)
	}
	return out.Run.Split.Segments
}

// arrayOf checks that segs are the tasks 0, 1, ... of one job array, and
// returns its id.
func arrayOf(t *testing.T, segs []segmentJob) int64 {
	t.Helper()
	var id int64
	for i, seg := range segs {
		if seg.Slurm == nil || seg.Slurm.ArrayTaskID == nil {
			t.Fatalf("segment %d: no array task: %+v", i, seg.Slurm)
		}
		if i == 0 {
			id = seg.Slurm.JobID
		}
		if seg.Slurm.JobID != id || *seg.Slurm.ArrayTaskID != i || seg.Slurm.Ref != fmt.Sprintf("%d_%d", id, i) {
			t.Errorf("segment %d: job %d task %d ref %s, want task %d of array %d", i, seg.Slurm.JobID, *seg.Slurm.ArrayTaskID, seg.Slurm.Ref, i, id)
		}
	}
	return id
}

// TestSplitRunAsJobArray: on Slurm, the segments of a split run are
// submitted as one job array (one sbatch call), segment i its task i, and
// the split run succeeds once they have.
func TestSplitRunAsJobArray(t *testing.T) {
	t.Parallel()
	s, calls := arrayServer(t, "FAKESIM_MODE=ok")
	r := launchSplit(t, s, map[string]any{"segments": 3})
	got := waitSplit(t, s, r.ID, "SUCCEEDED")
	if len(got.Kernels) != sampledLaunches {
		t.Errorf("%d kernels, want %d", len(got.Kernels), sampledLaunches)
	}
	segs := segmentJobs(t, s, r.ID)
	if len(segs) != 3 {
		t.Fatalf("%d segments", len(segs))
	}
	arrayOf(t, segs)
	for _, seg := range segs {
		if seg.State != "SUCCEEDED" || seg.Slurm.State != "COMPLETED" {
			t.Errorf("segment %s: %s, job %s", seg.ID, seg.State, seg.Slurm.State)
		}
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Errorf("%d sbatch calls for 3 segments, want 1", n)
	}
}

// TestJobArrayCancel: cancelling one segment of a split run cancels its
// task alone (scancel J_1), then the split run, whose other segments'
// tasks are the rest of the array: one scancel of the array (scancel J).
// Cancelling another split run cancels its whole array at once.
func TestJobArrayCancel(t *testing.T) {
	t.Parallel()
	s, calls := arrayServer(t, "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h")
	a := launchSplit(t, s, map[string]any{"segments": 3})
	b := launchSplit(t, s, map[string]any{"segments": 2})
	var segsA, segsB []segmentJob
	testkit.Eventually(t, 30*time.Second, "the segments of A running, B's submitted", func() bool {
		segsA, segsB = segmentJobs(t, s, a.ID), segmentJobs(t, s, b.ID)
		for _, seg := range segsA {
			if seg.State != "RUNNING" {
				return false
			}
		}
		for _, seg := range segsB {
			if seg.Slurm == nil {
				return false
			}
		}
		return true
	})
	arrayA, arrayB := arrayOf(t, segsA), arrayOf(t, segsB)

	var c struct{ CancelRun struct{ State string } }
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state } }`, map[string]any{"id": segsA[1].ID}, &c)
	waitSplit(t, s, a.ID, "CANCELLED")
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state } }`, map[string]any{"id": b.ID}, &c)
	if c.CancelRun.State != "CANCELLED" {
		t.Errorf("split run B cancelled: %s", c.CancelRun.State)
	}
	for _, r := range []string{a.ID, b.ID} {
		testkit.Eventually(t, 20*time.Second, "every segment of "+r+" cancelled", func() bool {
			for _, seg := range segmentJobs(t, s, r) {
				if seg.State != "CANCELLED" {
					return false
				}
			}
			return true
		})
	}
	want := []string{fmt.Sprintf("%d_1", arrayA), fmt.Sprint(arrayA), fmt.Sprint(arrayB)}
	if got := calls.Args("scancel"); !slices.Equal(got, want) {
		t.Errorf("scancel calls %q, want %q", got, want)
	}
	if n := calls.Count("sbatch"); n != 2 {
		t.Errorf("%d sbatch calls for 2 split runs, want 2", n)
	}
	// Slurm runs none of their tasks any more.
	testkit.Eventually(t, 20*time.Second, "no task left running", func() bool {
		out := slurmtest.Start(t).Command(t, "squeue", "--noheader", "--states=PENDING,RUNNING", "--format=%i")
		for _, id := range []int64{arrayA, arrayB} {
			if strings.Contains(out, fmt.Sprintf("%d_", id)) {
				return false
			}
		}
		return true
	})
}

// TestJobArrayReattach stops the server while a split run's tasks run:
// the next server follows the same tasks by their stored array id and
// index, records each segment from its own log, and submits nothing
// again.
func TestJobArrayReattach(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=150ms"}
	c := slurmtest.Start(t)
	calls := slurmtest.CountingBin(t)
	configure := func(cfg *app.Config) {
		cfg.DataDir = dir
		cfg.Executor = "slurm"
		cfg.Slurm = slurm.Config{Bin: calls.Dir, Env: []string{"SLURM_CONF=" + c.Conf()}, PollInterval: 300 * time.Millisecond, Timeout: 5 * time.Second}
	}
	s := sampledServer(t, "", env, configure)
	r := launchSplit(t, s, map[string]any{"segments": 2})
	var before []segmentJob
	testkit.Eventually(t, 30*time.Second, "the segments running", func() bool {
		before = segmentJobs(t, s, r.ID)
		return before[0].State == "RUNNING" && before[1].State == "RUNNING"
	})
	s.Close()

	s = sampledServer(t, "", env, configure)
	got := waitSplit(t, s, r.ID, "SUCCEEDED")
	if len(got.Kernels) != sampledLaunches {
		t.Errorf("%d kernels, want %d", len(got.Kernels), sampledLaunches)
	}
	after := segmentJobs(t, s, r.ID)
	arrayOf(t, after)
	for i := range after {
		if after[i].Slurm.Ref != before[i].Slurm.Ref || after[i].Slurm.State != "COMPLETED" {
			t.Errorf("segment %d: job %s %s after the restart, %s before", i, after[i].Slurm.Ref, after[i].Slurm.State, before[i].Slurm.Ref)
		}
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Errorf("%d sbatch calls across the restart, want 1", n)
	}
}

// TestJobArrayAdoptedAfterRestart: a job array whose submission was never
// recorded (the controller did not answer the server's sbatch; here the
// array's script is submitted by hand meanwhile) is found at the next
// start by its split run's name, each segment adopting its task, not
// submitted again. Not parallel: it stops the controller.
func TestJobArrayAdoptedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	c := slurmtest.Start(t)
	calls := slurmtest.CountingBin(t)
	configure := func(cfg *app.Config) {
		cfg.DataDir = dir
		cfg.Executor = "slurm"
		cfg.Slurm = slurm.Config{Bin: calls.Dir, Env: []string{"SLURM_CONF=" + c.Conf()}, PollInterval: 300 * time.Millisecond, Timeout: 5 * time.Second}
	}
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"}, configure)
	c.StopController(t)
	r := launchSplit(t, s, map[string]any{"segments": 2})
	testkit.Eventually(t, time.Minute, "sbatch tried", func() bool { return calls.Count("sbatch") > 0 })
	s.Close()
	if n := calls.Count("sbatch"); n != 1 {
		t.Fatalf("%d sbatch calls with the controller down", n)
	}
	c.StartController(t)
	script := filepath.Join(dir, "work", "runs", r.ID, slurm.ScriptName)
	id := strings.TrimSpace(c.Command(t, "sbatch", "--parsable", script))

	s = sampledServer(t, "", []string{"FAKESIM_MODE=ok"}, configure)
	waitSplit(t, s, r.ID, "SUCCEEDED")
	segs := segmentJobs(t, s, r.ID)
	if got := arrayOf(t, segs); fmt.Sprint(got) != id {
		t.Errorf("the segments are tasks of array %d, want %s", got, id)
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Errorf("the segments were submitted again (%d sbatch calls)", n)
	}
}
