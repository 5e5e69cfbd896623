package runs_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
)

// fakeArrayExec is a fakeExec that also starts segments together.
type fakeArrayExec struct {
	*fakeExec
	arrays chan runs.Array
}

func (f *fakeArrayExec) StartArray(_ context.Context, a runs.Array) { f.arrays <- a }

// newArrayRig is a managerRig whose executor is a fakeArrayExec.
func newArrayRig(t *testing.T, slots int) (*managerRig, *fakeArrayExec) {
	t.Helper()
	r := newManagerRig(t, slots)
	ax := &fakeArrayExec{fakeExec: r.exec, arrays: make(chan runs.Array, 10)}
	r.m = runs.New(runs.Config{
		BucketDir: r.bucket, WorkDir: t.TempDir(), ConfigsDir: simconfigtest.Write(t, t.TempDir()),
		NewExecutor: func(h runs.Host) runs.Executor { ax.host = h; return ax },
		Store:       r.d, Events: r.events, Ended: func(run cascade.Run) { r.ended <- run },
	})
	return r, ax
}

// launchSplit stores a split run of the quickstart trace with one segment
// per kernel id, as package sampled does, and returns it and its segments.
func launchSplit(t *testing.T, m *runs.Manager, kernels ...int) (cascade.Run, []cascade.Run) {
	t.Helper()
	ins := []runs.LaunchInput{{TraceID: quickstartID, SimConfig: simconfigtest.H100, Rerun: true}}
	for _, k := range kernels {
		ins = append(ins, runs.LaunchInput{TraceID: quickstartID, SimConfig: simconfigtest.H100, KernelIDs: []int{k}, Rerun: true})
	}
	rs, err := m.LaunchRuns(context.Background(), ins, func(rs []cascade.Run) error {
		sp := &cascade.SplitRun{Launches: len(kernels)}
		for i := range kernels {
			rs[1+i].SampledByID = &rs[0].ID
			sp.SegmentIDs = append(sp.SegmentIDs, rs[1+i].ID)
			sp.SegmentStarts = append(sp.SegmentStarts, i)
		}
		rs[0].Split = sp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs[0], rs[1:]
}

func (r *managerRig) nextArray(ax *fakeArrayExec) runs.Array {
	r.t.Helper()
	select {
	case a := <-ax.arrays:
		return a
	case <-time.After(10 * time.Second):
		r.t.Fatal("no array started")
		return runs.Array{}
	}
}

// TestManagerStartsSegmentsTogether: with an ArrayExecutor, the queued
// segments of a split run wait as one entry of the queue, and are
// prepared and handed to StartArray together, in one of its slots, each
// with its place among the segments; a segment cancelled meanwhile is
// left out (the tasks are sparse), and ordinary runs start one by one.
func TestManagerStartsSegmentsTogether(t *testing.T) {
	t.Parallel()
	r, ax := newArrayRig(t, 1)
	r.run()
	first := r.launch()
	if j := r.nextStart(); j.Run.ID != first.ID {
		t.Fatalf("started %s, want %s", j.Run.ID, first.ID)
	}
	parent, segs := launchSplit(t, r.m, 1, 2, 3)
	after := r.launch()
	if _, err := r.m.Cancel(context.Background(), segs[1].ID); err != nil {
		t.Fatal(err)
	}
	r.exec.turn(first.ID) <- func(ctx context.Context, h runs.Host) {
		h.Finish(ctx, first.ID, runs.End{State: cascade.RunFailed, Error: "done"})
	}
	a := r.nextArray(ax)
	if a.Parent.ID != parent.ID || !slices.Equal(a.Tasks, []int{0, 2}) || len(a.Jobs) != 2 {
		t.Fatalf("array of %s, tasks %v, %d jobs; want %s's tasks [0 2]", a.Parent.ID, a.Tasks, len(a.Jobs), parent.ID)
	}
	for i, j := range a.Jobs {
		want := segs[a.Tasks[i]]
		if j.Run.ID != want.ID || j.Total != 1 || filepath.Dir(j.Log) != j.Dir || j.Run.Figures.CoreClockMHz == 0 {
			t.Errorf("job %d: %+v, want segment %s prepared", i, j, want.ID)
		}
	}
	if a.Dir == "" || filepath.Base(a.Dir) != parent.ID || filepath.Dir(a.Dir) != filepath.Dir(a.Jobs[0].Dir) {
		t.Errorf("array dir %q, want the split run's own directory", a.Dir)
	}
	// The array took one slot, and gave it back: the next run starts.
	if j := r.nextStart(); j.Run.ID != after.ID {
		t.Fatalf("started %s, want %s", j.Run.ID, after.ID)
	}
	select {
	case a := <-ax.arrays:
		t.Fatalf("a second array: %+v", a.Tasks)
	default:
	}
}

// TestManagerRequeuesSegmentsTogether: segments handed back through
// Host.Enqueue (an executor that could not submit them) are started
// together again.
func TestManagerRequeuesSegmentsTogether(t *testing.T) {
	t.Parallel()
	r, ax := newArrayRig(t, 2)
	r.run()
	parent, segs := launchSplit(t, r.m, 1, 2)
	a := r.nextArray(ax)
	if len(a.Jobs) != 2 {
		t.Fatalf("%d jobs", len(a.Jobs))
	}
	if err := ax.host.Enqueue(context.Background(), []string{segs[1].ID, segs[0].ID}); err != nil {
		t.Fatal(err)
	}
	a = r.nextArray(ax)
	if a.Parent.ID != parent.ID || !slices.Equal(a.Tasks, []int{0, 1}) {
		t.Fatalf("again: array of %s, tasks %v", a.Parent.ID, a.Tasks)
	}
	r.noStart()
}
