package slurm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
)

// awaitRefs is await of jobs and array tasks.
func awaitRefs(t *testing.T, c *slurm.Client, refs []slurm.Ref, what string, done func(map[slurm.Ref]slurm.Status) bool) map[slurm.Ref]slurm.Status {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last map[slurm.Ref]slurm.Status
	for {
		sts, err := c.PollRefs(context.Background(), refs)
		switch {
		case err == nil:
			last = sts
			if done(sts) {
				return sts
			}
		case !errors.Is(err, slurm.ErrUnavailable):
			t.Fatalf("poll: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s; last statuses %+v", what, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestJobArray submits three tasks, each in a directory of its own, as
// one held job array (one sbatch call), cancels one task while it is
// pending, and releases the array: the other two run, each its own
// command in its own directory, writing its own log.
func TestJobArray(t *testing.T) {
	t.Parallel()
	c, calls := client(t)
	a := slurm.ArrayJob{Name: "array", Dir: filepath.Join(t.TempDir(), "array dir"), Hold: true}
	for _, i := range []int{0, 1, 3} {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("task %d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		a.Tasks = append(a.Tasks, slurm.Task{Index: i, Dir: dir, Log: filepath.Join(dir, "sim.log"),
			Command: []string{"sh", "-c", fmt.Sprintf(`echo "task %d in $(basename "$PWD")"`, i)}})
	}
	id, err := c.SubmitArray(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Count("sbatch"); n != 1 {
		t.Fatalf("%d sbatch calls for one array", n)
	}
	refs := []slurm.Ref{slurm.TaskRef(id, 0), slurm.TaskRef(id, 1), slurm.TaskRef(id, 3)}
	sts := awaitRefs(t, c, refs, "all pending", func(sts map[slurm.Ref]slurm.Status) bool {
		for _, r := range refs {
			if sts[r].State != slurm.Pending {
				return false
			}
		}
		return true
	})
	if st := sts[refs[2]]; st.Reason != "JobHeldUser" || st.Array != id || st.Task != 3 {
		t.Fatalf("held task: %+v", st)
	}
	if err := c.CancelRefs(context.Background(), refs[1]); err != nil {
		t.Fatal(err)
	}
	cluster.Command(t, "scontrol", "release", id.String())
	sts = awaitRefs(t, c, refs, "tasks 0 and 3 completed", func(sts map[slurm.Ref]slurm.Status) bool {
		return sts[refs[0]].State == slurm.Completed && sts[refs[2]].State == slurm.Completed
	})
	// A task cancelled while pending leaves squeue at once, and sacct
	// never records it.
	if st := sts[refs[1]].State; st != slurm.Cancelled && st != slurm.Lost {
		t.Errorf("cancelled task: %s", st)
	}
	for i, r := range refs {
		data, _ := os.ReadFile(a.Tasks[i].Log)
		want := fmt.Sprintf("task %d in task %d\n", r.Task, r.Task)
		if r.Task == 1 {
			want = ""
		}
		if string(data) != want {
			t.Errorf("task %d's log: %q, want %q", r.Task, data, want)
		}
	}
}

// TestCancelJobArray cancels a whole pending array by its id: every task
// ends.
func TestCancelJobArray(t *testing.T) {
	t.Parallel()
	c, _ := client(t)
	a := slurm.ArrayJob{Name: "array-cancel", Dir: filepath.Join(t.TempDir(), "array"), Hold: true}
	for i := range 2 {
		dir := t.TempDir()
		a.Tasks = append(a.Tasks, slurm.Task{Index: i, Dir: dir, Log: filepath.Join(dir, "sim.log"), Command: []string{"true"}})
	}
	id, err := c.SubmitArray(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	refs := []slurm.Ref{slurm.TaskRef(id, 0), slurm.TaskRef(id, 1)}
	awaitRefs(t, c, refs, "pending", func(sts map[slurm.Ref]slurm.Status) bool { return sts[refs[1]].State == slurm.Pending })
	if err := c.CancelRefs(context.Background(), slurm.JobRef(id)); err != nil {
		t.Fatal(err)
	}
	sts := awaitRefs(t, c, refs, "both ended", func(sts map[slurm.Ref]slurm.Status) bool {
		return sts[refs[0]].State.Done() && sts[refs[1]].State.Done()
	})
	for _, r := range refs {
		if st := sts[r]; st.State != slurm.Cancelled && st.State != slurm.Lost {
			t.Errorf("%s: %s", r, strings.ToLower(string(st.State)))
		}
	}
}
