package runs_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/quickstart"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

const quickstartID = quickstart.ID

// server starts a server whose simulator is the stand-in in the given
// mode (through env(1), so parallel tests can differ), with the test
// configs, and the quickstart trace uploaded and ready.
func server(t *testing.T, mode string, configure ...func(*app.Config)) *servertest.TestServer {
	t.Helper()
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	s := servertest.Server(t, append([]func(*app.Config){func(c *app.Config) {
		c.SimCmd = []string{"env", "FAKESIM_MODE=" + mode, "FAKESIM_DELAY=300ms", sim}
		c.SimConfigsDir = cfgDir
	}}, configure...)...)
	uploadQuickstart(t, s)
	return s
}

func uploadQuickstart(t testing.TB, s *servertest.TestServer) { t.Helper(); quickstart.Upload(t, s) }

type run struct {
	ID       string
	State    string
	Error    *string
	History  []string
	Progress struct{ KernelsDone, KernelsTotal int }
	Kernels  []struct {
		KernelID   int
		Context    *string
		Name       string
		LaunchUid  *int
		SimCycles  *int64
		SimTimeNs  *float64
		MeasuredNs *float64
		ErrorPct   *float64
	}
	Comparison *struct {
		KernelsCompared int
		Mape            float64
		Correlation     *float64
		SimTotalNs      float64
		MeasuredTotalNs float64
	}
	Steps []struct {
		Step                    int
		MeasuredNs, ProjectedNs float64
	}
}

const runFields = `id state error history progress { kernelsDone kernelsTotal }
	kernels { kernelId context name launchUid simCycles simTimeNs measuredNs errorPct }
	comparison { kernelsCompared mape correlation simTotalNs measuredTotalNs }
	steps { step measuredNs projectedNs }`

func launch(t *testing.T, s *servertest.TestServer, input map[string]any) run {
	t.Helper()
	var r struct{ LaunchRun run }
	s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+runFields+` } }`, map[string]any{"in": input}, &r)
	return r.LaunchRun
}

func get(t *testing.T, s *servertest.TestServer, id string) run {
	t.Helper()
	var r struct{ Run run }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { `+runFields+` } }`, map[string]any{"id": id}, &r)
	return r.Run
}

func waitRun(t *testing.T, s *servertest.TestServer, id string, states ...string) run {
	t.Helper()
	var r run
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("run %s in %v", id, states), func() bool {
		r = get(t, s, id)
		for _, st := range states {
			if r.State == st {
				return true
			}
		}
		return false
	})
	return r
}

// quickstartSizes are the sizes of the quickstart's kernel traces, in
// kernelslist.g order, from which fakesim derives its cycles.
func quickstartSizes(t *testing.T, s *servertest.TestServer) []int64 {
	var sizes []int64
	for i := 1; i <= 4; i++ {
		fi, err := os.Stat(filepath.Join(s.TraceDir(quickstartID), "traces", fmt.Sprintf("kernel-%d-ctx_0x55d2c3a1e4f0.traceg", i)))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	return sizes
}

func TestLaunchToSucceededLive(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			s := server(t, "slow", func(c *app.Config) { c.DatabaseURL = u })
			sub := s.Subscribe(t, "graphql-transport-ws", `subscription { runUpdated(traceId: "qs") { id state progress { kernelsDone kernelsTotal } } }`, nil)
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100, "label": "first"})
			if r.State != "QUEUED" {
				t.Fatalf("launched: %+v", r)
			}
			var states []string
			maxDone := 0
			for {
				var ev struct {
					RunUpdated struct {
						ID, State string
						Progress  struct{ KernelsDone, KernelsTotal int }
					}
				}
				if err := sub.Next(30*time.Second, &ev); err != nil {
					t.Fatalf("after %v: %v", states, err)
				}
				u := ev.RunUpdated
				if len(states) == 0 || states[len(states)-1] != u.State {
					states = append(states, u.State)
				}
				maxDone = max(maxDone, u.Progress.KernelsDone)
				if u.State == "SUCCEEDED" || u.State == "FAILED" {
					break
				}
			}
			if strings.Join(states, " ") != "QUEUED RUNNING SUCCEEDED" || maxDone != 4 {
				t.Fatalf("states %v, max kernels done %d", states, maxDone)
			}
			got := get(t, s, r.ID)
			sizes := quickstartSizes(t, s)
			// Hand-computed from fakesim's formula and the quickstart's
			// real_timing.json: cycles_i = 1000*i + size_i, sim ns = cycles *
			// 1000 / 1755 MHz, measured 3100, 9800, 2400, 1700 ns.
			measured := []float64{3100, 9800, 2400, 1700}
			var mape, simTotal float64
			for i, k := range got.Kernels {
				cycles := 1000*int64(i+1) + sizes[i]
				simNs := float64(cycles) * 1000 / 1755
				errPct := 100 * (simNs - measured[i]) / measured[i]
				if k.KernelID != i+1 || *k.SimCycles != cycles || math.Abs(*k.SimTimeNs-simNs) > 1e-6 || *k.MeasuredNs != measured[i] || math.Abs(*k.ErrorPct-errPct) > 1e-6 {
					t.Fatalf("kernel %d: %+v, want cycles %d sim %.3f err %.3f", i+1, k, cycles, simNs, errPct)
				}
				mape += math.Abs(errPct) / 4
				simTotal += simNs
			}
			c := got.Comparison
			if c == nil || c.KernelsCompared != 4 || math.Abs(c.Mape-mape) > 1e-6 || math.Abs(c.SimTotalNs-simTotal) > 1e-6 || c.MeasuredTotalNs != 17000 || c.Correlation == nil {
				t.Fatalf("comparison %+v, want MAPE %.4f sim total %.3f", c, mape, simTotal)
			}
			if len(got.Steps) == 0 {
				t.Fatalf("no step projections")
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, want   string
		keepsKernels bool
	}{
		{"crash", "exit", true},
		{"deadlock", "deadlock", true},
		{"maxcycles", "maximum", true},
		{"unsupported", "unsupported binary version", false},
		{"noexit", "exit", true},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			s := server(t, c.mode)
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
			if got.State != "FAILED" || got.Error == nil || !strings.Contains(strings.ToLower(*got.Error), c.want) {
				t.Fatalf("state %s error %v, want FAILED with %q", got.State, got.Error, c.want)
			}
			if c.keepsKernels && c.mode != "noexit" && len(got.Kernels) == 0 {
				t.Fatalf("partial results lost")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"slow", "ignoreterm"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var configure []func(*app.Config)
			if mode == "slow" {
				// It could finish before the cancel lands on a loaded
				// machine; ignoreterm never finishes on its own.
				configure = append(configure, hanging(t))
			}
			s := server(t, mode, configure...)
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			waitRun(t, s, r.ID, "RUNNING")
			// The answer is the run cancelled, not as it was a moment
			// before (its simulator is the server's own: it waits for it).
			var c struct {
				CancelRun struct{ State, FailureClass string }
			}
			s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state failureClass } }`, map[string]any{"id": r.ID}, &c)
			if c.CancelRun.State != "CANCELLED" || c.CancelRun.FailureClass != "CANCELLED" {
				t.Fatalf("cancelRun answered %+v, want CANCELLED, failure class CANCELLED", c.CancelRun)
			}
			got := waitRun(t, s, r.ID, "CANCELLED", "FAILED", "SUCCEEDED")
			if got.State != "CANCELLED" {
				t.Fatalf("state %s (%v)", got.State, got.Error)
			}
			errs := s.Do(t, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, map[string]any{"id": r.ID}, nil)
			if len(errs) != 1 || errs[0].Code() != "CONFLICT" {
				t.Fatalf("second cancel: %+v", errs)
			}
		})
	}
}

// TestQueueAndConcurrencyLimit: with one run at a time, a second waits
// QUEUED while the first is held RUNNING, a third is cancelled while
// queued and never runs, and the second runs once the first is done.
func TestQueueAndConcurrencyLimit(t *testing.T) {
	t.Parallel()
	hold, release := held(t)
	s := server(t, "ok", hold)
	a := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	b := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	c := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, a.ID, "RUNNING")
	if got := get(t, s, b.ID); got.State != "QUEUED" {
		t.Fatalf("second run %s while the first runs (limit 1)", got.State)
	}
	var cancelled struct {
		CancelRun struct{ State, FailureClass string }
	}
	s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { state failureClass } }`, map[string]any{"id": c.ID}, &cancelled)
	if cancelled.CancelRun.State != "CANCELLED" || cancelled.CancelRun.FailureClass != "CANCELLED" {
		t.Fatalf("queued run cancelled: %+v, want CANCELLED, failure class CANCELLED as a running one's", cancelled.CancelRun)
	}
	if got := get(t, s, c.ID); got.State != "CANCELLED" {
		t.Fatalf("queued run cancelled: %s", got.State)
	}
	if got := get(t, s, b.ID); got.State != "QUEUED" {
		t.Fatalf("second run %s while the first is held", got.State)
	}
	release()
	waitRun(t, s, a.ID, "SUCCEEDED")
	waitRun(t, s, b.ID, "RUNNING", "SUCCEEDED")
	waitRun(t, s, b.ID, "SUCCEEDED")
	if got := get(t, s, c.ID); got.State != "CANCELLED" {
		t.Fatalf("cancelled run ran: %s", got.State)
	}
}

func TestRestartRunsAgainFromTheStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := server(t, "ok", hanging(t), func(c *app.Config) { c.DataDir = dir })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, r.ID, "RUNNING")
	s.Close()
	s2 := server(t, "ok", func(c *app.Config) { c.DataDir = dir })
	got := waitRun(t, s2, r.ID, "SUCCEEDED")
	if len(got.History) != 1 || !strings.Contains(got.History[0], "runs again from the beginning") {
		t.Fatalf("history %q", got.History)
	}
}

func TestKernelSubset(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100, "kernelIds": []int{3, 2}})
	got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
	if got.State != "SUCCEEDED" || len(got.Kernels) != 2 || got.Kernels[0].KernelID != 2 || got.Kernels[1].KernelID != 3 {
		t.Fatalf("%s %v: %+v", got.State, got.Error, got.Kernels)
	}
	list, err := os.ReadFile(filepath.Join(s.DataDir, "work", "runs", r.ID, "kernelslist.g"))
	if err != nil || strings.Count(string(list), "kernel-") != 2 {
		t.Fatalf("run-local list: %q %v", list, err)
	}
}

func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	s.WriteFile(t, "uploading", "traces/kernel-1.trace", []byte("x"))
	testkit.Eventually(t, 5*time.Second, "uploading trace seen", func() bool {
		var r struct{ Trace *struct{ ID string } }
		s.MustDo(t, `{ trace(id: "uploading") { id } }`, nil, &r)
		return r.Trace != nil
	})
	cases := []struct {
		name  string
		input map[string]any
		code  string
		msg   string
	}{
		{"ErrNotReady", map[string]any{"traceId": "uploading", "simConfig": simconfigtest.H100}, "CONFLICT", "uploading"},
		{"ErrSample", map[string]any{"traceId": "sample", "simConfig": simconfigtest.H100}, "BAD_USER_INPUT", "sample trace"},
		{"ErrUnknownTrace", map[string]any{"traceId": "nope", "simConfig": simconfigtest.H100}, "NOT_FOUND", `traceId: trace "nope" not found`},
		{"ErrUnknownConfig", map[string]any{"traceId": quickstartID, "simConfig": "SM99_NOPE"}, "BAD_USER_INPUT", "no config"},
		{"ErrUnknownConfigCase", map[string]any{"traceId": quickstartID, "simConfig": "sm6_titanx"}, "BAD_USER_INPUT", `simConfig: no config "sm6_titanx"; did you mean "SM6_TITANX"?`},
		{"ErrUnknownConfigTypo", map[string]any{"traceId": quickstartID, "simConfig": "SM90_H10"}, "BAD_USER_INPUT", `did you mean "SM90_H100"?`},
		{"ErrUnknownKernel", map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100, "kernelIds": []int{99}}, "BAD_USER_INPUT", "99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.Do(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": c.input}, nil)
			if len(errs) != 1 || errs[0].Code() != c.code || !strings.Contains(errs[0].Message, c.msg) {
				t.Fatalf("errors %+v, want %s containing %q", errs, c.code, c.msg)
			}
		})
	}
}

func TestMissingSimulatorSaysHowToConfigure(t *testing.T) {
	t.Parallel()
	s := server(t, "ok", func(c *app.Config) { c.SimCmd = []string{"/nonexistent/accel-sim.out"} })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	got := waitRun(t, s, r.ID, "FAILED", "SUCCEEDED")
	if got.State != "FAILED" || !strings.Contains(*got.Error, "CASCADE_SIM_CMD") {
		t.Fatalf("%s: %v", got.State, got.Error)
	}
}

func TestConfigsAndDefault(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	var r struct {
		SimConfigs []struct {
			Name, ComputeCapability string
			CoreClockMHz            *float64
			L2Bytes                 *int
		}
		Trace struct {
			CompatibleSimConfigs []struct{ Name string }
			DefaultSimConfig     *struct{ Name string }
		}
	}
	s.MustDo(t, `{ simConfigs { name computeCapability coreClockMHz l2Bytes } trace(id: "qs") { compatibleSimConfigs { name } defaultSimConfig { name } } }`, nil, &r)
	if len(r.SimConfigs) != len(simconfigtest.Names()) || len(r.Trace.CompatibleSimConfigs) != 1 || r.Trace.DefaultSimConfig == nil || r.Trace.DefaultSimConfig.Name != simconfigtest.H100 {
		t.Fatalf("%+v", r)
	}
	// The L2's capacity, as the warming sizes it: 3 MB on SM6_TITANX
	// (64 sets × 128 B × 16 ways, × 12 memory channels × 2 sub-partitions),
	// 6 MB on SM7_QV100 (32 × 128 × 24, × 32 × 2).
	want := map[string]int{simconfigtest.TitanX: 3 << 20, simconfigtest.QV100: 6 << 20}
	for _, c := range r.SimConfigs {
		if w, ok := want[c.Name]; ok && (c.L2Bytes == nil || *c.L2Bytes != w) {
			t.Errorf("%s: l2Bytes %v, want %d", c.Name, c.L2Bytes, w)
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("configs %v not listed", want)
	}
}

func TestRunLogStreamsLive(t *testing.T) {
	t.Parallel()
	zero := 0
	for name, queue := range map[string]*int{"default queue": nil, "queue 0": &zero} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// With a queue of 0 the broker drops the log's nudge subscription
			// at every nudge: the server renews it, and the client sees one
			// stream, never completed, never starting over.
			s := server(t, "slow", func(c *app.Config) { c.SubscriberQueue = queue })
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			sub := s.Subscribe(t, "graphql-transport-ws", `subscription($id: ID!) { runLog(id: $id) { lines } }`, map[string]any{"id": r.ID})
			var lines []string
			for !strings.Contains(strings.Join(lines, "\n"), "GPGPU-Sim: *** exit detected ***") {
				var ev struct{ RunLog struct{ Lines []string } }
				if err := sub.Next(30*time.Second, &ev); err != nil {
					t.Fatalf("after %d lines: %v", len(lines), err)
				}
				lines = append(lines, ev.RunLog.Lines...)
			}
			log, err := os.ReadFile(filepath.Join(s.DataDir, "work", "runs", r.ID, "accel-sim.log"))
			if err != nil {
				t.Fatal(err)
			}
			// Every line of the file arrived, in order, none twice.
			if want := strings.Split(strings.TrimRight(string(log), "\n"), "\n"); strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Fatalf("streamed %d lines, the log has %d", len(lines), len(want))
			}
		})
	}
}

// TestRunUpdatedStartsWithTheRun subscribes, as a script does, to a run
// that will not change again: the first message is its state.
func TestRunUpdatedStartsWithTheRun(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, r.ID, "SUCCEEDED")
	for _, p := range []string{"graphql-transport-ws", "graphql-ws"} {
		sub := s.SubscribeNow(t, p, `subscription($id: ID) { runUpdated(id: $id) { id state progress { kernelsDone kernelsTotal } } }`, map[string]any{"id": r.ID})
		var m struct{ RunUpdated run }
		if err := sub.Next(5*time.Second, &m); err != nil {
			t.Fatalf("%s: first message: %v", p, err)
		}
		if u := m.RunUpdated; u.ID != r.ID || u.State != "SUCCEEDED" || u.Progress.KernelsDone != 4 {
			t.Fatalf("%s: first message %+v, want the run, succeeded", p, u)
		}
		// A run id names a run the server made: one it never made (a
		// typo in a script) is NOT_FOUND at once, not a silent wait.
		for _, vars := range []map[string]any{{"id": "nope"}, {"id": r.ID, "traceId": "another"}} {
			sub = s.SubscribeNow(t, p, `subscription($id: ID, $traceId: ID) { runUpdated(id: $id, traceId: $traceId) { id } }`, vars)
			err := sub.Next(5*time.Second, &m)
			if err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
				t.Fatalf("%s: runUpdated(%v): %v, want NOT_FOUND", p, vars, err)
			}
		}
	}
}

// TestCrossArchitectureRunGetsItsConfigFolder: a config of another
// architecture than the trace's launches and runs, the run says it is
// cross-architecture, and the simulator finds the side file its
// gpgpusim.config names relative to the run directory.
func TestCrossArchitectureRunGetsItsConfigFolder(t *testing.T) {
	t.Parallel()
	s := server(t, "ok")
	var r struct {
		LaunchRun struct {
			ID                string
			CrossArchitecture bool
		}
	}
	s.MustDo(t, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM6_TITANX"}) { id crossArchitecture } }`, nil, &r)
	if !r.LaunchRun.CrossArchitecture {
		t.Errorf("an sm_90 trace on SM6_TITANX (6.1) is not cross-architecture")
	}
	got := waitRun(t, s, r.LaunchRun.ID, "SUCCEEDED", "FAILED")
	if got.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", got.State, got.Error)
	}
	dir := filepath.Join(s.DataDir, "work", "runs", r.LaunchRun.ID)
	for _, name := range []string{"config_pascal_islip.icnt", "gpgpusim.config", "trace.config"} {
		if target, err := os.Readlink(filepath.Join(dir, name)); err != nil || filepath.Base(target) != name {
			t.Errorf("run directory %s: %s -> %q, %v", dir, name, target, err)
		}
	}
	var h struct {
		Run struct{ CrossArchitecture bool }
	}
	s.MustDo(t, `query($id: ID!) { run(id: $id) { crossArchitecture } }`, map[string]any{"id": r.LaunchRun.ID}, &h)
	var same struct {
		LaunchRun struct{ CrossArchitecture bool }
	}
	s.MustDo(t, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { crossArchitecture } }`, nil, &same)
	if !h.Run.CrossArchitecture || same.LaunchRun.CrossArchitecture {
		t.Errorf("crossArchitecture: SM6_TITANX %v, SM90_H100 %v", h.Run.CrossArchitecture, same.LaunchRun.CrossArchitecture)
	}
}

// TestLinkedConfigFolder: configs set up as a folder of links to a checkout
// (what the README once told users to make) still get the side files of
// the folder the links point into.
func TestLinkedConfigFolder(t *testing.T) {
	t.Parallel()
	real := simconfigtest.Write(t, t.TempDir(), simconfigtest.TitanX)
	links := t.TempDir()
	if err := os.Mkdir(filepath.Join(links, simconfigtest.TitanX), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gpgpusim.config", "trace.config"} {
		if err := os.Symlink(filepath.Join(real, simconfigtest.TitanX, f), filepath.Join(links, simconfigtest.TitanX, f)); err != nil {
			t.Fatal(err)
		}
	}
	s := server(t, "ok", func(c *app.Config) { c.SimConfigsDir = links })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.TitanX})
	if got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED"); got.State != "SUCCEEDED" {
		t.Fatalf("%s: %v", got.State, got.Error)
	}
}

// TestSimulatorErrorLineQuoted: a config whose side file is not in its
// folder fails the run with the simulator's own line, not an exit status.
func TestSimulatorErrorLineQuoted(t *testing.T) {
	t.Parallel()
	cfgs := simconfigtest.Write(t, t.TempDir(), simconfigtest.TitanX)
	s := server(t, "ok", func(c *app.Config) { c.SimConfigsDir = cfgs })
	// The side file goes after the start-up probe took the config (a
	// config broken before it is refused at launch, TestProbe): the run
	// is what finds it missing.
	testkit.Eventually(t, 30*time.Second, "configs checked", func() bool {
		var got struct{ SimConfigs []struct{ Checked bool } }
		s.MustDo(t, `{ simConfigs { checked } }`, nil, &got)
		return len(got.SimConfigs) > 0 && got.SimConfigs[0].Checked
	})
	if err := os.Remove(filepath.Join(cfgs, simconfigtest.TitanX, "config_pascal_islip.icnt")); err != nil {
		t.Fatal(err)
	}
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.TitanX})
	got := waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
	if got.State != "FAILED" || got.Error == nil || *got.Error != "simulator exit 255 after 0 of 4 kernels: Could not open configuration file config_pascal_islip.icnt" {
		t.Fatalf("%s: %v", got.State, cascadeDeref(got.Error))
	}
}

func cascadeDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestLocalExecutorStatus: the local executor is always healthy, says
// how many simulations it runs at once (sized by the machine when
// CASCADE_RUN_CONCURRENCY is not set), and its runs have no Slurm job.
func TestLocalExecutorStatus(t *testing.T) {
	t.Parallel()
	s := server(t, "ok", func(c *app.Config) { c.RunConcurrency = 0 })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	waitRun(t, s, r.ID, "SUCCEEDED")
	var got struct {
		Executor struct {
			Kind    string
			Healthy bool
			Message *string
		}
		Run struct {
			Executor string
			Slurm    *struct{ JobID int64 }
		}
	}
	s.MustDo(t, `query($id: ID!) { executor { kind healthy message } run(id: $id) { executor slurm { jobId } } }`, map[string]any{"id": r.ID}, &got)
	if got.Executor.Kind != "local" || !got.Executor.Healthy || got.Executor.Message == nil || got.Run.Executor != "local" || got.Run.Slurm != nil ||
		!strings.Contains(*got.Executor.Message, fmt.Sprintf("simulations at once: up to %d (the CPUs)", runtime.GOMAXPROCS(0))) {
		t.Fatalf("%+v", got)
	}
}
