package runs_test

import (
	"testing"

	"github.com/cascade-sim/cascade/runs"
)

// TestTraceArg: the simulator's -trace is the job's list relative to its
// directory, so neither the trace's name nor the data directory's path
// reaches the shell Accel-Sim opens traces through; a list outside the
// directory keeps its path.
func TestTraceArg(t *testing.T) {
	for _, c := range []struct{ dir, list, want string }{
		{"/data dir/work/runs/r1", "/data dir/work/runs/r1/trace/kernelslist.g", "./trace/kernelslist.g"},
		{"/data/work/runs/r1", "/data/work/runs/r1/kernelslist.g", "./kernelslist.g"},
		{"/data/work/runs/r1", "/elsewhere/kernelslist.g", "/elsewhere/kernelslist.g"},
	} {
		if got := (runs.Job{Dir: c.dir, KernelList: c.list}).TraceArg(); got != c.want {
			t.Errorf("TraceArg of %s in %s = %q, want %q", c.list, c.dir, got, c.want)
		}
	}
}
