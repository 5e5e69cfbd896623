package runs_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

type statsRun struct {
	State        string
	Error        *string
	FailureClass *string
	FailureLine  *string
	Figures      struct{ SimulatorBuild *string }
	StatCounters []struct{ Name, Kind, Unit string }
	StatTotals   []*float64
	StatKernels  []int
	Kernels      []struct{ StatValues []*float64 }
}

func getStats(t *testing.T, s *servertest.TestServer, id string) statsRun {
	t.Helper()
	var r struct{ Run statsRun }
	s.MustDo(t, `query($id: ID!) { run(id: $id) { state error failureClass failureLine figures { simulatorBuild }
		statCounters { name kind unit } statTotals statKernels kernels { statValues } } }`, map[string]any{"id": id}, &r)
	return r.Run
}

// TestRunStatisticsFromTheLog: a run of the stand-in simulator records
// the counters it read; each of its kernels has a value of every one
// (the stand-in prints them all), the run's total of an aggregate counter
// is the sum of its kernels', and its build is the simulator's.
func TestRunStatisticsFromTheLog(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			s := server(t, "ok", func(c *app.Config) { c.DatabaseURL = u })
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
			got := getStats(t, s, r.ID)
			tab := simstats.Builtin()
			if got.State != "SUCCEEDED" || got.FailureClass != nil || got.FailureLine != nil {
				t.Fatalf("state %s, failure %v %v", got.State, got.FailureClass, got.FailureLine)
			}
			if b := got.Figures.SimulatorBuild; b == nil || !strings.Contains(*b, "Accel-Sim [build fakesim]") || !strings.Contains(*b, "; ") {
				t.Errorf("simulator build %v", b)
			}
			if len(got.StatCounters) != len(tab.Counters)+len(simstats.RatiosOf(simstats.Builtin())) {
				t.Fatalf("%d counters, want the table's %d and %d derived", len(got.StatCounters), len(tab.Counters), len(simstats.RatiosOf(simstats.Builtin())))
			}
			if len(got.Kernels) != 4 {
				t.Fatalf("%d kernels", len(got.Kernels))
			}
			for i, c := range got.StatCounters {
				sum, n := 0.0, 0
				for k, kernel := range got.Kernels {
					if len(kernel.StatValues) != len(got.StatCounters) {
						t.Fatalf("kernel %d: %d values", k, len(kernel.StatValues))
					}
					v := kernel.StatValues[i]
					if v == nil {
						t.Errorf("kernel %d has no %s", k+1, c.Name)
						continue
					}
					sum += *v
					n++
				}
				if got.StatKernels[i] != n {
					t.Errorf("%s: total over %d kernels, %d have it", c.Name, got.StatKernels[i], n)
				}
				if c.Kind != "AGGREGATE" {
					continue
				}
				if tot := got.StatTotals[i]; tot == nil || math.Abs(*tot-sum) > 1e-9*math.Max(1, math.Abs(sum)) {
					t.Errorf("%s: total %v, want the kernels' sum %v", c.Name, tot, sum)
				}
			}
			cycles := tab.Index("cycles")
			if tot := got.StatTotals[cycles]; tot == nil || *tot <= 0 {
				t.Errorf("run cycles %v", tot)
			}
		})
	}
}

// TestFailureClassesRecorded: a run that fails each way the stand-in
// simulator fails as the real one does has its class and the log's
// decisive line, and runs(failureClass:) lists exactly it; a cancelled
// run is CANCELLED. OUT_OF_MEMORY here is a simulator whose allocation
// fails under ulimit -v (std::bad_alloc); on Slurm it and TIME_LIMIT are
// tested by TestSlurmJobEnds, and a local OOM kill by package proc's
// TestRunOOMKilled (on a fake cgroup count: the cgroups here are
// read-only), and a config the simulator refuses at start is
// refused at launch (TestProbe); the BAD_CONFIG_OPTION case here is a
// config edited after the probe.
func TestFailureClassesRecorded(t *testing.T) {
	t.Parallel()
	kernel3 := func(s *servertest.TestServer) string {
		return filepath.Join(s.TraceDir(quickstartID), "traces", "kernel-3-ctx_0x55d2c3a1e4f0.traceg")
	}
	for _, c := range []struct {
		name, mode string
		prepare    func(t *testing.T, s *servertest.TestServer)
		class      string
		line       string // the decisive line holds it; "": there is none
		error      string // the run's error holds it, when set
		shell      bool   // the simulator runs under sh, which reports signals
		ulimitV    bool   // the simulator runs with an address space limit
	}{
		{name: "deadlock", mode: "deadlock", class: "DEADLOCK", line: "GPGPU-Sim uArch: ERROR ** deadlock detected: last writeback core 0"},
		{name: "maxcycles", mode: "maxcycles", class: "CYCLE_LIMIT", line: "GPGPU-Sim: ** break due to reaching the maximum cycles (or instructions) **"},
		{name: "unsupported", mode: "unsupported", class: "UNSUPPORTED_BINARY_VERSION", line: "unsupported binary version: 20"},
		{name: "crash", mode: "crash", class: "ASSERTION", line: "Assertion `start_of_tb_stream_found' failed."},
		{name: "segfault", mode: "segfault", class: "SEGFAULT", line: "the simulator ended with signal: segmentation fault in kernel uid 2 (kernel-2"},
		{name: "segfault under a shell", mode: "segfault", shell: true, class: "SEGFAULT", line: "Segmentation fault"},
		{name: "truncated traceg", mode: "ok", class: "ASSERTION", line: "Assertion 'line.back() == '\\n'' failed.",
			prepare: func(t *testing.T, s *servertest.TestServer) {
				b, err := os.ReadFile(kernel3(s))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(kernel3(s), bytes.TrimRight(b, "\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		// Found before the simulator starts, which would simulate every
		// kernel before the missing one first.
		{name: "missing traceg", mode: "ok", class: "MISSING_TRACE_FILE", line: "traces/kernelslist.g line 7 names kernel-3-ctx_0x55d2c3a1e4f0.traceg, which is not on disk",
			error: `call retryTrace(id: "` + quickstartID + `")`,
			prepare: func(t *testing.T, s *servertest.TestServer) {
				if err := os.Remove(kernel3(s)); err != nil {
					t.Fatal(err)
				}
			}},
		// A kernelslist.g that names a raw trace: the error says so, not to
		// change the trace format.
		{name: "raw trace", mode: "ok", class: "UNSUPPORTED_TRACE_TYPE", line: "what():  Unsupported file type!",
			error: "kernel-3-ctx_0x55d2c3a1e4f0.trace is a raw NVBit trace, which no Accel-Sim reads",
			prepare: func(t *testing.T, s *servertest.TestServer) {
				raw := strings.TrimSuffix(kernel3(s), "g")
				if err := os.Rename(kernel3(s), raw); err != nil {
					t.Fatal(err)
				}
				list := filepath.Join(s.TraceDir(quickstartID), "traces", "kernelslist.g")
				b, err := os.ReadFile(list)
				if err != nil {
					t.Fatal(err)
				}
				b = bytes.Replace(b, []byte(filepath.Base(kernel3(s))), []byte(filepath.Base(raw)), 1)
				if err := os.WriteFile(list, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "memory beyond ulimit -v", mode: "memory", ulimitV: true, class: "OUT_OF_MEMORY", line: "std::bad_alloc"},
		{name: "config edited after the probe", mode: "ok", class: "BAD_CONFIG_OPTION", line: "Unknown Option: '-smem_latency'",
			prepare: func(t *testing.T, s *servertest.TestServer) {
				testkit.Eventually(t, 30*time.Second, "configs checked", func() bool {
					var r struct{ SimConfigs []struct{ Checked bool } }
					s.MustDo(t, `{ simConfigs { checked } }`, nil, &r)
					return len(r.SimConfigs) > 0 && r.SimConfigs[0].Checked
				})
				f, err := os.OpenFile(filepath.Join(s.Config.SimConfigsDir, simconfigtest.H100, "gpgpusim.config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString("\n-smem_latency 64\n"); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := server(t, c.mode, func(cfg *app.Config) {
				if c.shell {
					cfg.SimCmd = append([]string{"sh", "-c", `"$@"; exit $?`, "sh"}, cfg.SimCmd...)
				}
				if c.ulimitV {
					// 16 GB of address space: the stand-in starts, its
					// 64 GB do not fit.
					cfg.SimCmd = append([]string{"sh", "-c", `ulimit -v 16000000; exec "$@"`, "sh", "env", "FAKESIM_MEMORY_MB=65536"}, cfg.SimCmd...)
				}
			})
			if c.prepare != nil {
				c.prepare(t, s)
			}
			r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
			waitRun(t, s, r.ID, "SUCCEEDED", "FAILED")
			got := getStats(t, s, r.ID)
			lineOK := got.FailureLine == nil && c.line == "" || got.FailureLine != nil && c.line != "" && strings.Contains(*got.FailureLine, c.line)
			if got.State != "FAILED" || got.FailureClass == nil || *got.FailureClass != c.class || !lineOK {
				t.Fatalf("state %s class %v line %v, want FAILED %s with %q", got.State, cascadeDeref(got.FailureClass), cascadeDeref(got.FailureLine), c.class, c.line)
			}
			if msg := cascadeDeref(got.Error); c.error != "" && !strings.Contains(msg, c.error) {
				t.Errorf("error %q, want it to say %q", msg, c.error)
			}
			var list struct {
				Runs struct{ Nodes []struct{ ID string } }
			}
			s.MustDo(t, `query($c: FailureClass) { runs(failureClass: $c) { nodes { id } } }`, map[string]any{"c": c.class}, &list)
			if len(list.Runs.Nodes) != 1 || list.Runs.Nodes[0].ID != r.ID {
				t.Errorf("runs(failureClass: %s): %+v", c.class, list.Runs.Nodes)
			}
			other := "OTHER"
			s.MustDo(t, `query($c: FailureClass) { runs(failureClass: $c) { nodes { id } } }`, map[string]any{"c": other}, &list)
			if len(list.Runs.Nodes) != 0 {
				t.Errorf("runs(failureClass: %s): %+v", other, list.Runs.Nodes)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		s := server(t, "slow", hanging(t)) // no kernel ends before the cancel lands
		r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
		waitRun(t, s, r.ID, "RUNNING")
		s.MustDo(t, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, map[string]any{"id": r.ID}, nil)
		waitRun(t, s, r.ID, "CANCELLED")
		if got := getStats(t, s, r.ID); got.FailureClass == nil || *got.FailureClass != "CANCELLED" {
			t.Fatalf("class %v, want CANCELLED", cascadeDeref(got.FailureClass))
		}
		var list struct {
			Runs struct{ Nodes []struct{ ID string } }
		}
		s.MustDo(t, `{ runs(failureClass: CANCELLED) { nodes { id } } }`, nil, &list)
		if len(list.Runs.Nodes) != 1 || list.Runs.Nodes[0].ID != r.ID {
			t.Errorf("runs(failureClass: CANCELLED): %+v", list.Runs.Nodes)
		}
	})
}

// TestKernelsCSV: GET /runs/<id>/kernels.csv streams every kernel of a run
// larger than a page, in launch order, with a column per statistic, empty
// where the simulator printed -nan; a read-only token suffices, none is
// refused, and a run that is not there is 404.
func TestKernelsCSV(t *testing.T) {
	t.Parallel()
	tokens := cascade.Tokens{ReadWrite: "rw-token-0123456789", ReadOnly: "ro-token-0123456789"}
	s := server(t, "ok", func(c *app.Config) { c.Tokens = tokens })
	tab := simstats.Builtin()
	ctx := context.Background()
	run := &cascade.Run{ID: "csvrun", TraceID: quickstartID, SimConfig: simconfigtest.H100, State: cascade.RunSucceeded, Executor: "local"}
	for _, c := range tab.Counters {
		run.StatCounters = append(run.StatCounters, cascade.StatCounter{Name: c.Name, Kind: string(c.Kind), Unit: c.Unit})
	}
	if err := s.DB.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	const n = cascade.MaxPageSize + 7 // more than one page
	hits, cycles, occupancy := tab.Index("l2_read_hits"), tab.Index("cycles"), tab.Index("occupancy")
	ks := make([]cascade.RunKernel, n)
	for i := range ks {
		v := make(simstats.Values, len(tab.Counters))
		for j := range v {
			v[j] = float64(i + j)
		}
		v[hits], v[tab.Index("l2_read_accesses")] = 1, 4
		v[occupancy] = simstats.Absent // printed as -nan
		id := i%4 + 1
		ks[i] = cascade.RunKernel{KernelID: &id, Name: fmt.Sprintf("_Z1kv%d", i), TraceFile: fmt.Sprintf("kernel-%d.traceg", id),
			LaunchUID: i + 1, SimCycles: int64(1000 + i), SimInstructions: int64(2 * i), IPC: 0.5, Stats: simstats.Encode(nil, v)}
	}
	if err := s.DB.SaveRunKernels(ctx, run.ID, ks); err != nil {
		t.Fatal(err)
	}

	get := func(token, id string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/runs/"+id+"/kernels.csv", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := get("", run.ID); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %s", resp.Status)
	}
	if resp := get(tokens.ReadOnly, "nosuchrun"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a run that is not there: %s", resp.Status)
	}
	resp := get(tokens.ReadOnly, run.ID)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="run-csvrun-kernels.csv"` {
		t.Fatalf("%s, headers %v", resp.Status, resp.Header)
	}
	if resp.ContentLength >= 0 || !slices.Contains(resp.TransferEncoding, "chunked") {
		t.Errorf("content length %d, transfer encoding %v: not streamed", resp.ContentLength, resp.TransferEncoding)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	want := []string{"seq", "kernel_id", "context", "name", "launch_uid", "sim_cycles", "sim_instructions", "ipc", "sim_time_ns", "measured_ns", "error_pct"}
	if !slices.Equal(head[:len(want)], want) || len(head) != len(want)+len(tab.Counters)+len(simstats.RatiosOf(simstats.Builtin())) {
		t.Fatalf("header %v", head)
	}
	col := func(name string) int {
		i := slices.Index(head, name)
		if i < 0 {
			t.Fatalf("no column %q in %v", name, head)
		}
		return i
	}
	if col("stat_ipc") != len(want)+tab.Index("ipc") || col("l2_read_hit_rate") != len(want)+len(tab.Counters) {
		t.Errorf("statistics columns: %v", head[len(want):])
	}
	if len(rows) != n+1 {
		t.Fatalf("%d rows, want %d kernels and the header", len(rows)-1, n)
	}
	measured := []string{"3100", "9800", "2400", "1700"} // the quickstart's real timing of kernels 1 to 4
	for i, row := range rows[1:] {
		if row[col("seq")] != strconv.Itoa(i) || row[col("name")] != ks[i].Name || row[col("sim_cycles")] != strconv.Itoa(1000+i) ||
			row[col("cycles")] != strconv.Itoa(i+cycles) || row[col("occupancy")] != "" || row[col("l2_read_hit_rate")] != "0.25" ||
			row[col("kernel_id")] != strconv.Itoa(i%4+1) || row[col("measured_ns")] != measured[i%4] || row[col("error_pct")] == "" {
			t.Fatalf("row %d: %v", i, row)
		}
		if row[col("sim_time_ns")] == "" { // the config has a core clock
			t.Fatalf("row %d has no simulated time", i)
		}
	}
	resp = get(tokens.ReadWrite, run.ID)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("with the read-write token: %s, %v", resp.Status, err)
	}
}

// TestStatTotalsFollowTheRunLive: while a run runs, every runUpdated
// message carries the totals of the kernels stored so far, as the run's
// page shows them: held before its third kernel's statistics, a run is
// RUNNING with totals of its first kernel, equal to what its stored
// kernels sum to; at its end, of all four.
func TestStatTotalsFollowTheRunLive(t *testing.T) {
	t.Parallel()
	step := filepath.Join(t.TempDir(), "step")
	if err := syscall.Mkfifo(step, 0o600); err != nil {
		t.Fatal(err)
	}
	pipe, err := os.OpenFile(step, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipe.Close() })
	release := func(n int) {
		if _, err := pipe.WriteString(strings.Repeat("\n", n)); err != nil {
			t.Fatal(err)
		}
	}
	s := server(t, "ok", func(c *app.Config) { c.SimCmd = append([]string{"env", fakesim.EnvStep + "=" + step}, c.SimCmd...) })
	tab := simstats.Builtin()
	agg := slices.IndexFunc(tab.Counters, func(c simstats.Counter) bool { return c.Kind == simstats.Aggregate })
	r := launch(t, s, map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100})
	sub := s.SubscribeNow(t, "graphql-transport-ws", `subscription($id: ID) { runUpdated(id: $id) { state progress { kernelsDone } statTotals } }`, map[string]any{"id": r.ID})
	type update struct {
		State      string
		Progress   struct{ KernelsDone int }
		StatTotals []*float64
	}
	next := func() update {
		var m struct{ RunUpdated update }
		if err := sub.Next(60*time.Second, &m); err != nil {
			t.Fatal(err)
		}
		return m.RunUpdated
	}
	release(2) // kernels 1 and 2; kernel 1's result is final once 2's block starts
	var live update
	for live = next(); len(live.StatTotals) <= agg || live.StatTotals[agg] == nil; live = next() {
		if live.State != "QUEUED" && live.State != "RUNNING" {
			t.Fatalf("run %s before any totals", live.State)
		}
	}
	if live.State != "RUNNING" {
		t.Fatalf("totals first came with state %s", live.State)
	}
	kernelSum := func() (float64, int) {
		got := getStats(t, s, r.ID)
		sum := 0.0
		for _, k := range got.Kernels {
			if v := k.StatValues[agg]; v != nil {
				sum += *v
			}
		}
		return sum, len(got.Kernels)
	}
	if sum, n := kernelSum(); n < 1 || n > 2 || *live.StatTotals[agg] != sum {
		t.Errorf("running: total %v of %s, %d kernels stored summing to %v", *live.StatTotals[agg], tab.Counters[agg].Name, n, sum)
	}

	release(1000)
	var end update
	for end = next(); end.State == "RUNNING"; end = next() {
	}
	if end.State != "SUCCEEDED" {
		t.Fatalf("run %s", end.State)
	}
	if sum, n := kernelSum(); n != 4 || end.StatTotals[agg] == nil || *end.StatTotals[agg] != sum || sum <= *live.StatTotals[agg] {
		t.Errorf("at the end: total %v, %d kernels summing to %v (running: %v)", end.StatTotals[agg], n, sum, *live.StatTotals[agg])
	}
}
