package runs_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// splitView is what the split-run tests read of a run.
type splitView struct {
	ID, State    string
	Error        *string
	FailureClass *string
	Progress     struct{ KernelsDone, KernelsTotal int }
	Kernels      []struct {
		KernelID   int
		Name       string
		SimCycles  int64
		StatValues []*float64
	}
	Figures      struct{ SimCycles *int64 }
	StatCounters []struct{ Name, Kind string }
	StatTotals   []*float64
	Comparison   *struct{ Mape float64 }
	Split        *struct {
		SegmentStarts    []int
		Launches         int
		Warmup, Period   int
		SimulatorSeconds float64
		Segments         []struct {
			ID, State      string
			Label          *string
			FailureClass   *string
			SampledBy      *struct{ ID string }
			KernelIds      []int
			KernelContexts []string
			History        []string
			Progress       struct{ KernelsDone, KernelsTotal int }
		}
	}
}

const splitFields = `id state error failureClass progress { kernelsDone kernelsTotal }
	kernels { kernelId name simCycles statValues } figures { simCycles } statCounters { name kind } statTotals comparison { mape }
	split { segmentStarts launches warmup period simulatorSeconds segments { id state label failureClass sampledBy { id } kernelIds kernelContexts history progress { kernelsDone kernelsTotal } } }`

func getSplit(t *testing.T, s *servertest.TestServer, id string) splitView {
	t.Helper()
	var r struct{ Run splitView }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+splitFields+` } }`, map[string]any{"id": id}, &r)
	return r.Run
}

func waitSplit(t *testing.T, s *servertest.TestServer, id, state string) splitView {
	t.Helper()
	var r splitView
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("split run %s %s", id, state), func() bool {
		r = getSplit(t, s, id)
		return r.State == state
	})
	return r
}

// launchSplit launches a split run of the sampled-run trace on H100 with
// the given split input.
func launchSplit(t *testing.T, s *servertest.TestServer, split map[string]any) splitView {
	t.Helper()
	var r struct{ LaunchRun splitView }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+splitFields+` } }`, map[string]any{"in": map[string]any{
		"traceId": sampledID, "simConfig": simconfigtest.H100, "rerun": true, "split": split,
	}}, &r)
	return r.LaunchRun
}

// TestSplitRunStitches: a split run's segments each simulate their
// launches after a step of warm-up, and once all have succeeded the split
// run has every launch once, in order, with the cycles and statistics of
// the full run's (the stand-in numbers each kernel by its id, so a kernel
// runs the same in any segment), its totals summed as a full run's, its
// kernels.csv and comparison those of a full run.
func TestSplitRunStitches(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := sampledServer(t, u, []string{"FAKESIM_MODE=ok", fakesim.EnvNumberBy + "=id"}, func(c *app.Config) { c.RunConcurrency = 2 })
			full := launchFull(t, s)
			r := launchSplit(t, s, map[string]any{"segments": 3})
			if r.Split == nil || len(r.Split.Segments) != 3 || r.Split.Period != 4 || r.Split.Warmup != 4 || r.Split.Launches != sampledLaunches ||
				r.Progress.KernelsTotal != sampledLaunches {
				t.Fatalf("launched: %+v", r)
			}
			r = waitSplit(t, s, r.ID, "SUCCEEDED")
			f := getSplit(t, s, full.ID)
			testkit.Eventually(t, 60*time.Second, "full run SUCCEEDED", func() bool { f = getSplit(t, s, full.ID); return f.State == "SUCCEEDED" })

			sp := r.Split
			for i, seg := range sp.Segments {
				start, end := sp.SegmentStarts[i], sampledLaunches
				if i+1 < len(sp.SegmentStarts) {
					end = sp.SegmentStarts[i+1]
				}
				warm := min(4, start)
				if start%4 != 0 || end <= start {
					t.Errorf("segment %d starts at launch %d, ends at %d: want a step's start", i+1, start, end)
				}
				if seg.State != "SUCCEEDED" || seg.SampledBy == nil || seg.SampledBy.ID != r.ID ||
					cascade.Deref(seg.Label) != fmt.Sprintf("segment %d of 3", i+1) || len(seg.KernelIds) != end-start+warm || seg.KernelIds[0] != start-warm+1 {
					t.Errorf("segment %d (launches %d–%d, %d of warm-up): %+v", i+1, start, end-1, warm, seg)
				}
				// No segment has L2 warmed: its step of warm-up touches
				// every line its own launches do (this trace's steps
				// touch the same lines), and brings them in itself.
				if slices.ContainsFunc(seg.History, func(h string) bool { return strings.Contains(h, " L2 warmed: ") }) {
					t.Errorf("segment %d: history %q: want no L2 warmed (its step of warm-up touches its lines)", i+1, seg.History)
				}
				if seg.Progress.KernelsDone != len(seg.KernelIds) || seg.Progress.KernelsTotal != len(seg.KernelIds) {
					t.Errorf("segment %d: progress %+v of %d kernels", i+1, seg.Progress, len(seg.KernelIds))
				}
			}
			if len(r.Kernels) != sampledLaunches || len(f.Kernels) != sampledLaunches {
				t.Fatalf("%d kernels, the full run %d: want %d", len(r.Kernels), len(f.Kernels), sampledLaunches)
			}
			var sum int64
			for i, k := range r.Kernels {
				fk := f.Kernels[i]
				sum += k.SimCycles
				if k.KernelID != i+1 || k.Name != fk.Name || k.SimCycles != fk.SimCycles {
					t.Errorf("launch %d: %+v, full run's %+v", i, k, fk)
				}
			}
			if r.Figures.SimCycles == nil || *r.Figures.SimCycles != sum || *f.Figures.SimCycles != sum {
				t.Errorf("total cycles %v, the full run's %v: want %d", r.Figures.SimCycles, f.Figures.SimCycles, sum)
			}
			if r.Progress.KernelsDone != sampledLaunches || sp.SimulatorSeconds <= 0 {
				t.Errorf("progress %+v, simulator seconds %v", r.Progress, sp.SimulatorSeconds)
			}
			// Statistics: a kernel's counters are its segment's, the
			// totals summed over them; a RATE counter is a snapshot of
			// the simulator process, so only it may differ (and the
			// stand-in's L2_BW, which it prints from its process's
			// running totals).
			if len(r.StatCounters) == 0 || len(r.StatCounters) != len(f.StatCounters) {
				t.Fatalf("stat counters %d, the full run's %d", len(r.StatCounters), len(f.StatCounters))
			}
			compared := 0
			for j, c := range r.StatCounters {
				if c.Kind == "RATE" || c.Kind == "DERIVED" || c.Name == "l2_bandwidth" {
					continue
				}
				compared++
				if a, b := r.StatTotals[j], f.StatTotals[j]; (a == nil) != (b == nil) || a != nil && math.Abs(*a-*b) > 1e-9*math.Abs(*b) {
					t.Errorf("total of %s: %v, the full run's %v", c.Name, ptrF(a), ptrF(b))
				}
			}
			if compared == 0 {
				t.Error("no AGGREGATE or KERNEL counter compared")
			}
			if r.Comparison == nil || f.Comparison == nil || math.Abs(r.Comparison.Mape-f.Comparison.Mape) > 1e-9 {
				t.Errorf("comparison %+v, the full run's %+v", r.Comparison, f.Comparison)
			}
			// kernels.csv: a full run's, a row a launch.
			csv := getText(t, s, "/runs/"+r.ID+"/kernels.csv")
			if lines := strings.Count(strings.TrimSpace(csv), "\n"); lines != sampledLaunches {
				t.Errorf("kernels.csv has %d rows, want %d:\n%s", lines, sampledLaunches, csv)
			}
			// The run list leaves the segments out.
			var list struct {
				Runs struct{ Nodes []struct{ ID string } }
			}
			s.MustDo(t, `{ runs(traceId: "`+sampledID+`") { nodes { id } } }`, nil, &list)
			if len(list.Runs.Nodes) != 2 {
				t.Errorf("runs listed: %+v, want the split and the full run", list.Runs.Nodes)
			}
			// Without warm-up, a segment after the first has L2 warmed
			// first (the launches before it touched what its kernels
			// do); the warming kernel is no kernel of the segment.
			cold := waitSplit(t, s, launchSplit(t, s, map[string]any{"segments": 3, "warmup": 0}).ID, "SUCCEEDED")
			for i, seg := range cold.Split.Segments {
				if warmed := slices.ContainsFunc(seg.History, func(h string) bool { return strings.Contains(h, " L2 warmed: ") }); warmed != (i > 0) ||
					seg.Progress.KernelsTotal != len(seg.KernelIds) {
					t.Errorf("no warm-up, segment %d: history %q, progress %+v of %d kernels; want L2 warmed %v", i+1, seg.History, seg.Progress, len(seg.KernelIds), i > 0)
				}
			}
		})
	}
}

func getText(t *testing.T, s *servertest.TestServer, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

// TestSplitRunRefuses: a split option the trace cannot take is refused,
// naming the field, and nothing is stored.
func TestSplitRunRefuses(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"})
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"split": map[string]any{"segments": 1}}, "split.segments: at least 2"},
		{map[string]any{"split": map[string]any{}, "traceId": "nope"}, `traceId: trace "nope" not found`},
		{map[string]any{"split": map[string]any{"segments": 11}}, "split.segments: at most 10"},
		{map[string]any{"split": map[string]any{"warmup": -1}}, "split.warmup"},
		{map[string]any{"split": map[string]any{}, "kernelIds": []int{1, 2}}, "kernelIds: leave it out"},
		{map[string]any{"split": map[string]any{}, "sampling": map[string]any{"plan": "x"}}, "give sampling or split, not both"},
	}
	for _, c := range cases {
		in := map[string]any{"traceId": sampledID, "simConfig": simconfigtest.H100}
		for k, v := range c.in {
			in[k] = v
		}
		errs := s.Do(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": in}, nil)
		if len(errs) == 0 || !strings.Contains(errs[0].Message, c.want) {
			t.Errorf("%v: errors %+v, want %q", c.in, errs, c.want)
		}
	}
	var list struct {
		Runs struct{ Nodes []struct{ ID string } }
	}
	s.MustDo(t, `{ runs(segments: true) { nodes { id } } }`, nil, &list)
	if len(list.Runs.Nodes) != 0 {
		t.Errorf("refused launches stored runs: %+v", list.Runs.Nodes)
	}
}

// TestSplitRunSegmentFails: a segment that fails fails its split run,
// naming the segment, its launches and its run (whose log says why); the
// other segments are cancelled and the split run has no kernels.
func TestSplitRunSegmentFails(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=300ms", "FAKESIM_BINARY_VERSIONS=90"},
		func(c *app.Config) { c.RunConcurrency = 1 })
	r := launchSplit(t, s, map[string]any{"segments": 3})
	starts := r.Split.SegmentStarts
	breakKernel(t, s, starts[1]+2) // the second launch of segment 2's own
	r = waitSplit(t, s, r.ID, "FAILED")
	seg := r.Split.Segments[1]
	want := fmt.Sprintf("segment 2 of 3 (launches %d–%d, run %s: see its log): ", starts[1], starts[2]-1, seg.ID)
	if r.Error == nil || !strings.HasPrefix(*r.Error, want) || !strings.Contains(*r.Error, "unsupported binary version") ||
		cascade.Deref(r.FailureClass) != "UNSUPPORTED_BINARY_VERSION" {
		t.Errorf("split run: error %q, class %v; want %q…, UNSUPPORTED_BINARY_VERSION", cascade.Deref(r.Error), cascade.Deref(r.FailureClass), want)
	}
	testkit.Eventually(t, 30*time.Second, "the segment after it cancelled", func() bool {
		r = getSplit(t, s, r.ID)
		return r.Split.Segments[2].State == "CANCELLED"
	})
	if len(r.Kernels) != 0 || r.Split.Segments[1].State != "FAILED" {
		t.Errorf("failed split run: %d kernels, segments %+v", len(r.Kernels), r.Split.Segments)
	}
}

// TestSplitRunCancel: cancelling a split run that is running cancels its
// segments.
func TestSplitRunCancel(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=slow", "FAKESIM_DELAY=1h"})
	r := launchSplit(t, s, map[string]any{})
	if n := len(r.Split.Segments); n != 2 { // the default: the executor's slots, at least 2
		t.Errorf("%d segments by default, want 2", n)
	}
	waitSplit(t, s, r.ID, "RUNNING")
	var c struct{ CancelRun struct{ State string } }
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state } }`, map[string]any{"id": r.ID}, &c)
	if c.CancelRun.State != "CANCELLED" {
		t.Errorf("cancelled: %+v", c.CancelRun)
	}
	testkit.Eventually(t, 30*time.Second, "every segment cancelled", func() bool {
		r = getSplit(t, s, r.ID)
		for _, seg := range r.Split.Segments {
			if seg.State != "CANCELLED" {
				return false
			}
		}
		return true
	})
}

// TestSplitRunTwoContexts: on a trace of two CUDA contexts that both
// number their kernels from 1, each segment of a split run names the
// context of each of its kernel ids and simulates its launches (and their
// warm-up) only, not the other context's launches of the same ids; the
// split run has every launch of both contexts once.
func TestSplitRunTwoContexts(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok", fakesim.EnvNumberBy + "=id"}, func(c *app.Config) { c.RunConcurrency = 2 })
	if _, err := upload.Upload(context.Background(), upload.Options{Source: writeTwoContextTrace(t, func(string, int) bool { return true }),
		PrefixDir: s.Config.BucketDir(), RunName: "two"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "two ready", func() bool {
		var r struct{ Trace *struct{ State string } }
		s.MustDo(t, `{ trace(id: "two") { state } }`, nil, &r)
		return r.Trace != nil && r.Trace.State == "READY"
	})
	var l struct{ LaunchRun splitView }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+splitFields+` } }`, map[string]any{"in": map[string]any{
		"traceId": "two", "simConfig": simconfigtest.H100, "rerun": true, "split": map[string]any{"segments": 2},
	}}, &l)
	r := waitSplit(t, s, l.LaunchRun.ID, "SUCCEEDED")
	if r.Split == nil || len(r.Split.Segments) != 2 {
		t.Fatalf("split run: %+v", r.Split)
	}
	for i, seg := range r.Split.Segments {
		start, end := r.Split.SegmentStarts[i], r.Split.Launches
		if i+1 < len(r.Split.SegmentStarts) {
			end = r.Split.SegmentStarts[i+1]
		}
		want := end - start + min(r.Split.Warmup, start)
		if len(seg.KernelContexts) != len(seg.KernelIds) || len(seg.KernelIds) != want || seg.Progress.KernelsTotal != want {
			t.Errorf("segment %d (launches %d–%d): %d kernel ids, %d contexts, %d kernels simulated; want %d of each",
				i+1, start, end-1, len(seg.KernelIds), len(seg.KernelContexts), seg.Progress.KernelsTotal, want)
		}
	}
	if len(r.Kernels) != 2*twoCtxLaunches {
		t.Errorf("the split run has %d kernels; the trace launches %d", len(r.Kernels), 2*twoCtxLaunches)
	}
}

// TestSplitRunNotes: a split run cut into fewer segments than asked for,
// or simulating much more than its trace, says why in its history and
// SplitRun.note (it said only "split into N segments").
func TestSplitRunNotes(t *testing.T) {
	t.Parallel()
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"})
	var r struct {
		LaunchRun struct {
			History []string
			Split   struct {
				Note     string
				Segments []struct{ ID string }
			}
		}
	}
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { history split { note segments { id } } } }`, map[string]any{"in": map[string]any{
		"traceId": sampledID, "simConfig": simconfigtest.H100, "rerun": true, "split": map[string]any{"segments": 10},
	}}, &r)
	sp := r.LaunchRun.Split
	if sp.Note == "" || !slices.ContainsFunc(r.LaunchRun.History, func(h string) bool { return strings.Contains(h, sp.Note) }) {
		t.Fatalf("%d segments of 10 asked, note %q, history %q: want a note, in the history too", len(sp.Segments), sp.Note, r.LaunchRun.History)
	}
	if len(sp.Segments) < 10 && !strings.Contains(sp.Note, "not the 10 asked for") {
		t.Errorf("%d segments of 10 asked, note %q: want it to say why", len(sp.Segments), sp.Note)
	}
	t.Logf("%d segments: %s", len(sp.Segments), sp.Note)
}
