package runs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/runs/local"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/quickstart"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestSampledRunRestart: a server that stops while a sampled run runs
// leaves it to the next, which runs its segments again and never the
// sampled run itself, and projects it when they have succeeded.
func TestSampledRunRestart(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := sampledServer(t, u, []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h"}, func(c *app.Config) { c.DataDir = dir })
			plan := planSampling(t, s)
			r := launchSampled(t, s, plan.ID, false)
			waitSampled(t, s, r.ID, "RUNNING")
			s.Close()
			s2 := sampledServer(t, u, []string{"FAKESIM_MODE=ok"}, func(c *app.Config) { c.DataDir = dir })
			got := waitSampled(t, s2, r.ID, "SUCCEEDED")
			if len(got.KernelPage.Nodes) != sampledLaunches || got.Progress.KernelsDone != plan.Samples {
				t.Errorf("%d kernels, progress %+v", len(got.KernelPage.Nodes), got.Progress)
			}
			var h struct{ Run struct{ History []string } }
			s2.MustDo(t, `query($id: ID!) { run(id: $id) { history } }`, map[string]any{"id": r.ID}, &h)
			for _, l := range h.Run.History {
				if strings.Contains(l, "runs again") {
					t.Errorf("the sampled run was run again: %q", h.Run.History)
				}
			}
		})
	}
}

// breakKernel makes the stand-in fail on the kernel with the given id of
// the sampled-run trace: its header's binary version becomes one the
// simulator does not decode (FAKESIM_BINARY_VERSIONS=90), the file keeping
// its size and modification time so the scanner sees no change.
func breakKernel(t *testing.T, s *servertest.TestServer, id int) {
	t.Helper()
	path := filepath.Join(s.TraceDir(sampledID), "traces", fmt.Sprintf("kernel-%d-ctx_%s.traceg", id, sampledCtx))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "-binary version = 90\n", "-binary version = 61\n", 1)
	if text == string(b) {
		t.Fatalf("%s: no binary version 90", path)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestSampledRunSegmentFails: a segment that fails fails its sampled run
// with its failure class, naming the segment and its kernels, and the
// other segments are cancelled.
func TestSampledRunSegmentFails(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// One simulation at a time, each kernel taking an hour: the
			// first segment fails at its first kernel (the stand-in reads
			// a kernel's binary version before it sleeps) while the others
			// wait or run, and none can succeed before it is cancelled.
			s := sampledServer(t, u, []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h", "FAKESIM_BINARY_VERSIONS=90"},
				func(c *app.Config) { c.RunConcurrency = 1 })
			plan := planSampling(t, s)
			// The longest segment is queued first (sampling.LongestFirst):
			// it fails while the others wait.
			k := longestRange(t, s, plan)
			first := plan.Segments[k]
			breakKernel(t, s, first.Start)
			r := launchSampled(t, s, plan.ID, false)
			r = waitSampled(t, s, r.ID, "FAILED")
			n := len(plan.Segments)
			want := fmt.Sprintf("segment %d of %d (kernels %d–%d): ", k+1, n, first.Start, first.End)
			if r.Error == nil || !strings.HasPrefix(*r.Error, want) || !strings.Contains(*r.Error, "unsupported binary version") ||
				cascade.Deref(r.FailureClass) != "UNSUPPORTED_BINARY_VERSION" {
				t.Errorf("sampled run: error %q, class %v; want %q…, UNSUPPORTED_BINARY_VERSION", cascade.Deref(r.Error), cascade.Deref(r.FailureClass), want)
			}
			testkit.EventuallySays(t, 30*time.Second, "the other segments cancelled", func() (bool, string) {
				r = getSampled(t, s, r.ID)
				return cancelledBut(r, k)
			})
			// Listed in the order of their ranges, whatever the queue's.
			for i, seg := range r.Sampling.Segments {
				if want := fmt.Sprintf("segment %d of %d", i+1, n); cascade.Deref(seg.Label) != want {
					t.Errorf("segment %d listed as %q, want %q", i+1, cascade.Deref(seg.Label), want)
				}
			}
			if seg := r.Sampling.Segments[k]; seg.State != "FAILED" || cascade.Deref(seg.FailureClass) != "UNSUPPORTED_BINARY_VERSION" {
				t.Errorf("segment %d, the longest: %+v", k+1, seg)
			}
			if r.Sampling.ProjectedCycles != nil || len(r.KernelPage.Nodes) != 0 {
				t.Errorf("failed sampled run has a projection: %v, %d kernels", ptrF(r.Sampling.ProjectedCycles), len(r.KernelPage.Nodes))
			}
		})
	}
}

// cancelledBut reports whether every segment of r but the one at except
// (-1 for none) is CANCELLED, and lists their states.
func cancelledBut(r sampledRunView, except int) (bool, string) {
	all := true
	var states []string
	for i, seg := range r.Sampling.Segments {
		if i == except {
			continue
		}
		all = all && seg.State == "CANCELLED"
		states = append(states, seg.State)
	}
	return all, strings.Join(states, ", ")
}

// longestRange is the index of the range of plan whose launches hold the
// most warp instructions (the first of equal ones): the segment a server
// queues first.
func longestRange(t *testing.T, s *servertest.TestServer, plan samplingPlan) int {
	t.Helper()
	var tr struct {
		Trace struct {
			Kernels struct {
				Nodes []struct{ KernelID, Instructions int }
			}
		}
	}
	s.MustDo(t, `{ trace(id: "`+sampledID+`") { kernels(first: 1000) { nodes { kernelId instructions } } } }`, nil, &tr)
	insts := map[int]int{}
	for _, k := range tr.Trace.Kernels.Nodes {
		insts[k.KernelID] = k.Instructions
	}
	best, bestN := -1, -1
	for i, rg := range plan.Segments {
		n := 0
		for id := rg.Start; id <= rg.End; id++ {
			n += insts[id]
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	return best
}

// TestSampledRunCancel: cancelling a sampled run that is running cancels
// its segments.
func TestSampledRunCancel(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A kernel takes an hour: no segment can succeed before the
			// cancel lands, however loaded the machine (with 2 s kernels
			// a slow poll once saw the first segment succeed first).
			s := sampledServer(t, u, []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h"}, func(c *app.Config) { c.RunConcurrency = 1 })
			plan := planSampling(t, s)
			r := launchSampled(t, s, plan.ID, false)
			r = waitSampled(t, s, r.ID, "RUNNING") // its first segment started
			var c struct{ CancelRun struct{ State string } }
			s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state } }`, map[string]any{"id": r.ID}, &c)
			if c.CancelRun.State != "CANCELLED" {
				t.Errorf("cancelled: %+v", c.CancelRun)
			}
			testkit.EventuallySays(t, 30*time.Second, "every segment cancelled", func() (bool, string) {
				r = getSampled(t, s, r.ID)
				return cancelledBut(r, -1)
			})
			if r.State != "CANCELLED" || cascade.Deref(r.FailureClass) != "CANCELLED" {
				t.Errorf("sampled run: %s, %v", r.State, cascade.Deref(r.FailureClass))
			}
		})
	}
}

// TestSampledRunLaunchChecks: a sampled launch names what is wrong with
// it; and removing the trace removes a sampled run with its segments.
func TestSampledRunLaunchChecks(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := sampledServer(t, u, []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h"}, func(c *app.Config) { c.RunConcurrency = 1 })
			quickstart.Upload(t, s)
			plan := planSampling(t, s)
			var other struct{ PlanSampling struct{ ID string } }
			s.MustDo(t, `mutation { planSampling(traceId: "`+quickstart.ID+`") { id } }`, nil, &other)
			for _, c := range []struct {
				in        map[string]any
				code, msg string
			}{
				{map[string]any{"traceId": sampledID, "simConfig": simconfigtest.H100, "sampling": map[string]any{"plan": "spnope"}},
					"NOT_FOUND", "sampling.plan: no sampling plan \"spnope\""},
				{map[string]any{"traceId": sampledID, "simConfig": simconfigtest.H100, "sampling": map[string]any{"plan": other.PlanSampling.ID}},
					"BAD_USER_INPUT", "sampling.plan: plan \"" + other.PlanSampling.ID + "\" is a plan of trace \"qs\""},
				{map[string]any{"traceId": sampledID, "simConfig": simconfigtest.H100, "kernelIds": []int{1}, "sampling": map[string]any{"plan": plan.ID}},
					"BAD_USER_INPUT", "kernelIds: leave it out for a sampled run"},
				{map[string]any{"traceId": sampledID, "simConfig": "SM1_NOPE", "sampling": map[string]any{"plan": plan.ID}},
					"BAD_USER_INPUT", "simConfig: "},
				{map[string]any{"traceId": "nope", "simConfig": simconfigtest.H100, "sampling": map[string]any{"plan": plan.ID}},
					"BAD_USER_INPUT", "sampling.plan: plan \"" + plan.ID + "\" is a plan of trace \"sp\", not of \"nope\""},
			} {
				errs := s.Do(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": c.in}, nil)
				if len(errs) != 1 || errs[0].Code() != c.code || !strings.Contains(errs[0].Message, c.msg) {
					t.Errorf("launch %v: %+v; want %s %q", c.in, errs, c.code, c.msg)
				}
			}
			var l struct{ Runs struct{ TotalCount int } }
			s.MustDo(t, `{ runs(segments: true) { totalCount } }`, nil, &l)
			if l.Runs.TotalCount != 0 {
				t.Errorf("refused launches stored %d runs", l.Runs.TotalCount)
			}

			r := launchSampled(t, s, plan.ID, false)
			waitSampled(t, s, r.ID, "RUNNING")
			if err := os.RemoveAll(s.TraceDir(sampledID)); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 30*time.Second, "the sampled run and its segments removed", func() bool {
				s.MustDo(t, `{ runs(segments: true) { totalCount } }`, nil, &l)
				return l.Runs.TotalCount == 0
			})
		})
	}
}

// TestSampledRunSegmentsInParallel: with CASCADE_RUN_CONCURRENCY unset
// the server sizes it by the machine, and a sampled run's segments run
// side by side, up to the CPUs, as memory allows.
func TestSampledRunSegmentsInParallel(t *testing.T) {
	t.Parallel()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: segments run one at a time")
	}
	// Two stand-in simulators with no recorded peak are taken to need
	// 2 GiB each (local.DefaultPeakRSS) and an eighth: a machine with less
	// free runs them one at a time, rightly.
	if mem, err := local.ReadMemory(); err != nil || mem.Available < 5*local.DefaultPeakRSS/2 {
		t.Skipf("memory available %+v, %v: too little for two simulations at once", mem, err)
	}
	s := sampledServer(t, "", []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h"}, func(c *app.Config) { c.RunConcurrency = 0 })
	plan := planSampling(t, s)
	r := launchSampled(t, s, plan.ID, false)
	testkit.Eventually(t, 60*time.Second, "two segments running at once", func() bool {
		n := 0
		for _, seg := range getSampled(t, s, r.ID).Sampling.Segments {
			if seg.State == "RUNNING" {
				n++
			}
		}
		return n >= 2
	})
	var c struct{ CancelRun struct{ State string } }
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state } }`, map[string]any{"id": r.ID}, &c)
}
