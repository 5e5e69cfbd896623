package local_test

// The local executor against a stand-in Host, with the stand-in simulator:
// no Manager, no database, no server.

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/runs/local"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// host is a runs.Host keeping runs in memory; ends receives each recorded
// end.
type host struct {
	mu   sync.Mutex
	runs map[string]cascade.Run
	logs map[string]string // run id -> its job's log
	ends chan runs.End
	// atExit, when set, is called once a job's simulator has exited (at
	// its follower's Finish); finishErr is the context's error at each
	// Finish.
	atExit    func()
	finishErr []error
}

func newHost() *host {
	return &host{runs: map[string]cascade.Run{}, logs: map[string]string{}, ends: make(chan runs.End, 10)}
}

func (h *host) UpdateRun(_ context.Context, id string, fn func(r *cascade.Run) error) (cascade.Run, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.runs[id]
	if !ok {
		return r, false, cascade.Errorf(cascade.ENOTFOUND, "run %q not found", id)
	}
	switch err := fn(&r); {
	case errors.Is(err, cascade.ErrUnchanged):
		return h.runs[id], false, nil
	case err != nil:
		return h.runs[id], false, err
	}
	h.runs[id] = r
	return r, true, nil
}

func (h *host) UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) ([]cascade.Run, []string, error) {
	var saved []cascade.Run
	for _, id := range ids {
		r, ok, err := h.UpdateRun(ctx, id, fn)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			saved = append(saved, r)
		}
	}
	return saved, nil, nil
}

func (h *host) Follow(_ context.Context, id string, total int) runs.Follower {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &follower{path: h.logs[id], total: total, atExit: h.atExit}
}

func (h *host) KernelTotal(context.Context, string) int { return 0 }
func (h *host) Enqueue(context.Context, []string) error { return nil }
func (h *host) StatusChanged(cascade.ExecutorStatus)    {}
func (h *host) Finish(ctx context.Context, _ string, end runs.End) {
	h.mu.Lock()
	h.finishErr = append(h.finishErr, ctx.Err())
	h.mu.Unlock()
	h.ends <- end
}

func (h *host) get(id string) cascade.Run {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[id]
}

// follower reads the whole log at Finish.
type follower struct {
	path   string
	total  int
	atExit func()
}

func (f *follower) Grew() {}

func (f *follower) Finish() *simlog.Parser {
	if f.atExit != nil {
		f.atExit()
	}
	p := simlog.NewParser(f.total)
	if file, err := os.Open(f.path); err == nil {
		defer file.Close()
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			p.Line(sc.Text())
		}
	}
	return p
}

// job stores a queued run on h and returns its job: the quickstart's
// kernel list under SM90_H100, in a fresh directory.
func job(t *testing.T, h *host, id string) runs.Job {
	t.Helper()
	cfgs, err := simconfig.Load(simconfigtest.Write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := simconfig.Find(cfgs, simconfigtest.H100)
	if !ok {
		t.Fatalf("no config %s", simconfigtest.H100)
	}
	r := cascade.Run{ID: id, TraceID: "qs", SimConfig: cfg.Name, State: cascade.RunQueued, History: []string{}}
	dir := t.TempDir()
	j := runs.Job{Run: r, Dir: dir, Config: cfg, Log: filepath.Join(dir, "accel-sim.log"), Total: 4,
		KernelList: filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces", "kernelslist.g")}
	h.mu.Lock()
	h.runs[id], h.logs[id] = r, j.Log
	h.mu.Unlock()
	return j
}

// executor is a local executor of the stand-in simulator in the given
// mode (and FAKESIM_* settings), recording through h.
func executor(t *testing.T, h *host, env ...string) *local.Executor {
	cmd := append(append([]string{"env"}, env...), fakesim.Build(t))
	return local.New(h, local.Config{Command: cmd})
}

func nextEnd(t *testing.T, h *host) runs.End {
	t.Helper()
	select {
	case end := <-h.ends:
		return end
	case <-time.After(time.Minute):
		t.Fatal("no end recorded")
		return runs.End{}
	}
}

// TestStartRunsTheSimulatorToItsEnd: Start commits the run RUNNING with
// its kernel total, runs the simulator, and records its end from the log.
func TestStartRunsTheSimulatorToItsEnd(t *testing.T) {
	t.Parallel()
	h := newHost()
	e := executor(t, h, "FAKESIM_MODE=ok")
	e.Start(context.Background(), job(t, h, "r1"))
	end := nextEnd(t, h)
	if end.State != cascade.RunSucceeded || end.Error != "" || end.Log == nil || len(end.Log.Kernels()) != 4 {
		t.Fatalf("end %+v", end)
	}
	if r := h.get("r1"); r.State != cascade.RunRunning || r.StartedAt == nil || r.KernelsTotal != 4 {
		t.Fatalf("run as the executor left it: %+v", r)
	}
}

// TestEndRecordsTheSimulatorsCost: the end the executor records sets the
// run's wall time and peak memory from the simulator's rusage: at least
// what the stand-in simulator's memory mode held.
func TestEndRecordsTheSimulatorsCost(t *testing.T) {
	t.Parallel()
	h := newHost()
	const mb = 64
	e := executor(t, h, "FAKESIM_MODE=memory", "FAKESIM_MEMORY_MB=64", "FAKESIM_DELAY=1ms")
	e.Start(context.Background(), job(t, h, "r1"))
	end := nextEnd(t, h)
	if end.State != cascade.RunSucceeded || end.Also == nil {
		t.Fatalf("end %+v", end)
	}
	var r cascade.Run
	end.Also(&r)
	if r.Figures.PeakRSSBytes < mb<<20 {
		t.Errorf("PeakRSSBytes = %d, want at least %d", r.Figures.PeakRSSBytes, mb<<20)
	}
	if r.Figures.WallSeconds <= 0 {
		t.Errorf("WallSeconds = %v, want > 0", r.Figures.WallSeconds)
	}
}

// TestCancelStopsTheSimulator: Cancel stops a running simulator and its
// run ends CANCELLED; a run that is a Slurm job is a CONFLICT.
func TestCancelStopsTheSimulator(t *testing.T) {
	t.Parallel()
	h := newHost()
	e := executor(t, h, "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h")
	j := job(t, h, "r1")
	returned := make(chan struct{})
	go func() { defer close(returned); e.Start(context.Background(), j) }()
	testkit.Eventually(t, 30*time.Second, "simulator started", func() bool {
		_, err := os.Stat(j.Log)
		return err == nil
	})
	if _, err := e.Cancel(context.Background(), []cascade.Run{h.get("r1")}); err != nil {
		t.Fatal(err)
	}
	if end := nextEnd(t, h); end.State != cascade.RunCancelled {
		t.Fatalf("end %+v, want CANCELLED", end)
	}
	<-returned

	job := cascade.Run{ID: "r2", State: cascade.RunRunning, Slurm: cascade.SlurmJob{JobID: cascade.Ptr(int64(7))}}
	if _, err := e.Cancel(context.Background(), []cascade.Run{job}); cascade.ErrorCode(err) != cascade.ECONFLICT || !strings.Contains(err.Error(), "CASCADE_EXECUTOR=slurm") {
		t.Fatalf("cancel of a Slurm job's run: %v, want CONFLICT", err)
	}
}

// TestStartLeavesARunNoLongerQueued: a run cancelled before its turn is
// not started.
func TestStartLeavesARunNoLongerQueued(t *testing.T) {
	t.Parallel()
	h := newHost()
	e := executor(t, h, "FAKESIM_MODE=ok")
	j := job(t, h, "r1")
	h.UpdateRun(context.Background(), "r1", func(r *cascade.Run) error { r.State = cascade.RunCancelled; return nil })
	e.Start(context.Background(), j)
	if _, err := os.Stat(j.Log); !os.IsNotExist(err) {
		t.Fatalf("the simulator ran: %v", err)
	}
	select {
	case end := <-h.ends:
		t.Fatalf("end recorded: %+v", end)
	default:
	}
}

// TestShutdownLeavesTheRunRunning: when Start's context ends (the server
// stops), the simulator is stopped and no end is recorded.
func TestShutdownLeavesTheRunRunning(t *testing.T) {
	t.Parallel()
	h := newHost()
	e := executor(t, h, "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h")
	j := job(t, h, "r1")
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() { defer close(returned); e.Start(ctx, j) }()
	testkit.Eventually(t, 30*time.Second, "simulator started", func() bool {
		_, err := os.Stat(j.Log)
		return err == nil
	})
	cancel()
	<-returned
	select {
	case end := <-h.ends:
		t.Fatalf("end recorded at shutdown: %+v", end)
	default:
	}
	if r := h.get("r1"); r.State != cascade.RunRunning {
		t.Fatalf("run %s at shutdown, want RUNNING", r.State)
	}
}

// TestEndStoredAsTheServerStops: a simulator that ended on its own just
// as the server began to stop has its end recorded, with a context the
// stop does not cancel: the finished simulation is not run again from the
// start at the next start (QA: a SIGTERM just after an hours-long
// simulation exited threw it away).
func TestEndStoredAsTheServerStops(t *testing.T) {
	t.Parallel()
	h := newHost()
	ctx, cancel := context.WithCancel(context.Background())
	h.atExit = cancel // the stop begins once the simulator has exited
	e := executor(t, h, "FAKESIM_MODE=ok")
	e.Start(ctx, job(t, h, "r1"))
	end := nextEnd(t, h)
	if end.State != cascade.RunSucceeded || end.Log == nil || len(end.Log.Kernels()) != 4 {
		t.Fatalf("end %+v", end)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.finishErr) != 1 || h.finishErr[0] != nil {
		t.Fatalf("Finish's context: %v, want one not cancelled", h.finishErr)
	}
}

// TestMissingSimulatorFailsTheRun: a simulator that is not there fails
// the run saying how to set one.
func TestMissingSimulatorFailsTheRun(t *testing.T) {
	t.Parallel()
	h := newHost()
	e := local.New(h, local.Config{Command: []string{filepath.Join(t.TempDir(), "accel-sim.out")}})
	e.Start(context.Background(), job(t, h, "r1"))
	end := nextEnd(t, h)
	if end.State != cascade.RunFailed || !strings.Contains(end.Error, "simulator not found") || !strings.Contains(end.Error, "CASCADE_SIM_CMD") {
		t.Fatalf("end %+v", end)
	}
}

// TestMemoryHoldsASimulationBack: sized by the machine (Concurrency 0),
// with 3 GiB available and two slots, a simulation whose config peaked at
// 2 GiB waits, queued and with no process, while another such one runs,
// and starts once it has ended; a smaller one starts beside it at once.
// A waiting run cancelled meanwhile never starts.
func TestMemoryHoldsASimulationBack(t *testing.T) {
	t.Parallel()
	h := newHost()
	cmd := []string{"env", "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h", fakesim.Build(t)}
	e := local.New(h, local.Config{Command: cmd, CPUs: 2,
		Memory: func() (local.Memory, error) { return local.Memory{Available: 3 << 30, From: "test"}, nil }})
	if e.Slots() != 2 {
		t.Fatalf("Slots = %d, want the 2 CPUs", e.Slots())
	}
	if msg := e.Status().Message; msg == nil || !strings.Contains(*msg, "up to 2") || !strings.Contains(*msg, "3.0 GiB now") {
		t.Fatalf("status message %v", msg)
	}
	ctx := context.Background()
	start := func(id string, peak int64) (runs.Job, chan struct{}) {
		j := job(t, h, id)
		j.PeakRSS = peak
		returned := make(chan struct{})
		go func() { defer close(returned); e.Start(ctx, j) }()
		return j, returned
	}
	logged := func(j runs.Job) bool { _, err := os.Stat(j.Log); return err == nil }
	j1, r1 := start("big1", 2<<30)
	testkit.Eventually(t, 30*time.Second, "the first simulator started", func() bool { return logged(j1) })
	j2, r2 := start("big2", 2<<30)
	j3, r3 := start("small", 64<<20)
	testkit.Eventually(t, 30*time.Second, "the small one started beside the first", func() bool { return logged(j3) })
	if logged(j2) || h.get("big2").State != cascade.RunQueued {
		t.Fatalf("the second big one started beside the first: %s", h.get("big2").State)
	}
	for _, id := range []string{"small", "big1"} {
		if _, err := e.Cancel(ctx, []cascade.Run{h.get(id)}); err != nil {
			t.Fatal(err)
		}
	}
	<-r1
	<-r3
	testkit.Eventually(t, 30*time.Second, "the second big one started once the first ended", func() bool { return logged(j2) })
	if r := h.get("big2"); r.State != cascade.RunRunning {
		t.Fatalf("big2 %s, want RUNNING", r.State)
	}

	// big3 waits beside big2, and is cancelled while it waits.
	j4, r4 := start("big3", 2<<30)
	time.Sleep(200 * time.Millisecond)
	h.UpdateRun(ctx, "big3", func(r *cascade.Run) error { r.State = cascade.RunCancelled; return nil })
	select {
	case <-r4:
	case <-time.After(30 * time.Second):
		t.Fatal("Start of a run cancelled while it waited for memory did not return")
	}
	if logged(j4) {
		t.Fatal("big3 started after it was cancelled")
	}
	if _, err := e.Cancel(ctx, []cascade.Run{h.get("big2")}); err != nil {
		t.Fatal(err)
	}
	<-r2
	for range 3 { // big1, small, big2: cancelled
		if end := nextEnd(t, h); end.State != cascade.RunCancelled {
			t.Fatalf("end %+v, want CANCELLED", end)
		}
	}
}
