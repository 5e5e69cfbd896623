package runs_test

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// job is a run's state, executor and Slurm job (nil without one).
type job struct {
	State, Executor string
	Slurm           *struct {
		JobID       int64
		ArrayTaskID *int
	}
}

func jobOf(t *testing.T, s *servertest.TestServer, id string) job {
	t.Helper()
	var out struct{ Run job }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { state executor slurm { jobId arrayTaskId } } }`, map[string]any{"id": id}, &out)
	return out.Run
}

// TestSampledRunOnSlurm: under the Slurm executor the segments of a
// sampled run are the tasks of one job array, the sampled run has no job,
// and it succeeds once they have.
func TestSampledRunOnSlurm(t *testing.T) {
	t.Parallel()
	c := slurmtest.Start(t)
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"}, func(cfg *app.Config) {
		cfg.Executor = "slurm"
		cfg.Slurm = slurm.Config{Env: []string{"SLURM_CONF=" + c.Conf()}, PollInterval: 300 * time.Millisecond, Timeout: 5 * time.Second}
	})
	plan := planSampling(t, s)
	r := launchSampled(t, s, plan.ID, false)
	var got sampledRunView
	testkit.Eventually(t, 2*time.Minute, "the sampled run over", func() bool {
		got = getSampled(t, s, r.ID)
		return got.State != "QUEUED" && got.State != "RUNNING"
	})
	if got.State != "SUCCEEDED" {
		t.Fatalf("sampled run on Slurm: %s, %v", got.State, cascade.Deref(got.Error))
	}
	jobs, tasks := map[int64]bool{}, map[int]bool{}
	for _, seg := range got.Sampling.Segments {
		sr := jobOf(t, s, seg.ID)
		if sr.State != "SUCCEEDED" || sr.Executor != "slurm" || sr.Slurm == nil || sr.Slurm.ArrayTaskID == nil || tasks[*sr.Slurm.ArrayTaskID] {
			t.Errorf("segment %s: %s, executor %s, job %+v", seg.ID, sr.State, sr.Executor, sr.Slurm)
			continue
		}
		jobs[sr.Slurm.JobID], tasks[*sr.Slurm.ArrayTaskID] = true, true
	}
	if len(jobs) != 1 {
		t.Errorf("the segments are tasks of %d job arrays, want 1", len(jobs))
	}
	if p := jobOf(t, s, r.ID); p.Slurm != nil {
		t.Errorf("the sampled run has a job: %+v", p.Slurm)
	}
	if len(got.KernelPage.Nodes) != sampledLaunches {
		t.Errorf("%d kernels", len(got.KernelPage.Nodes))
	}
}
