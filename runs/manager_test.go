package runs_test

// The Manager's own logic against a stand-in executor, on a database of
// its own: no server, no simulator, no cluster.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// fakeExec is an Executor whose jobs do what the test says: Start hands
// each job to the test on started and blocks until the test returns from
// the job's turn (by receiving it from its own channel).
type fakeExec struct {
	host      runs.Host
	slots     int
	configErr error

	started  chan runs.Job // a Start call's job, as it starts
	turns    sync.Map      // run id -> chan func(ctx context.Context, h runs.Host): what the Start call does, then returns
	removals sync.Map      // run id -> chan struct{}, closed by Remove

	mu        sync.Mutex
	reattach  []cascade.Run
	startNow  []string // Reattach's answer
	cancelled [][]string
	removed   []string
}

func (f *fakeExec) Name() string                                        { return "fake" }
func (f *fakeExec) Slots() int                                          { return f.slots }
func (f *fakeExec) Check(context.Context, []runs.Dir) ([]string, error) { return nil, nil }
func (f *fakeExec) CheckConfig(cascade.SimConfig) error                 { return f.configErr }
func (f *fakeExec) Run(ctx context.Context)                             { <-ctx.Done() }
func (f *fakeExec) Status() cascade.ExecutorStatus {
	return cascade.ExecutorStatus{Kind: "fake", Healthy: true}
}

func (f *fakeExec) Reattach(_ context.Context, left []cascade.Run) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reattach = left
	return f.startNow
}

func (f *fakeExec) turn(id string) chan func(context.Context, runs.Host) {
	c, _ := f.turns.LoadOrStore(id, make(chan func(context.Context, runs.Host)))
	return c.(chan func(context.Context, runs.Host))
}

// gone is closed when Remove is called for the run: a job Start has
// stops, as a real executor's would.
func (f *fakeExec) gone(id string) chan struct{} {
	c, _ := f.removals.LoadOrStore(id, make(chan struct{}))
	return c.(chan struct{})
}

func (f *fakeExec) Start(ctx context.Context, job runs.Job) {
	f.started <- job
	select {
	case do := <-f.turn(job.Run.ID):
		do(ctx, f.host)
	case <-f.gone(job.Run.ID):
	case <-ctx.Done():
	}
}

func (f *fakeExec) Cancel(_ context.Context, rs []cascade.Run) ([]cascade.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	f.cancelled = append(f.cancelled, ids)
	return nil, nil
}

func (f *fakeExec) Remove(_ context.Context, r cascade.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, r.ID)
	if !slices.Contains(f.removed[:len(f.removed)-1], r.ID) {
		close(f.gone(r.ID))
	}
}

// events collects what the Manager publishes.
type events struct {
	mu  sync.Mutex
	all []cascade.Event
}

func (e *events) Publish(ev cascade.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) removed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []string
	for _, ev := range e.all {
		if r, ok := ev.(cascade.RunRemoved); ok {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// managerRig is a Manager with a fakeExec over a fresh database holding
// the quickstart trace, ready.
type managerRig struct {
	t      *testing.T
	d      *db.DB
	m      *runs.Manager
	exec   *fakeExec
	events *events
	ended  chan cascade.Run
	bucket string
}

func newManagerRig(t *testing.T, slots int) *managerRig {
	t.Helper()
	return newManagerRigWith(t, slots, nil)
}

// newManagerRigWith is newManagerRig whose Manager reads and writes
// through wrap's store over the database (when wrap is not nil).
func newManagerRigWith(t *testing.T, slots int, wrap func(*db.DB) runs.Store) *managerRig {
	t.Helper()
	r := &managerRig{t: t, d: dbtest.DB(t), exec: &fakeExec{slots: slots, started: make(chan runs.Job, 100)},
		events: &events{}, ended: make(chan cascade.Run, 100), bucket: t.TempDir()}
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	for _, e := range must(os.ReadDir(src)) {
		testkit.CopyFile(t, filepath.Join(src, e.Name()), filepath.Join(r.bucket, quickstartID, "traces", e.Name()))
	}
	tr := cascade.Trace{ID: quickstartID, State: cascade.TraceReady, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}}
	if err := r.d.SaveTrace(context.Background(), &tr); err != nil {
		t.Fatal(err)
	}
	var store runs.Store = r.d
	if wrap != nil {
		store = wrap(r.d)
	}
	r.m = runs.New(runs.Config{
		BucketDir: r.bucket, WorkDir: t.TempDir(), ConfigsDir: simconfigtest.Write(t, t.TempDir()),
		NewExecutor: func(h runs.Host) runs.Executor { r.exec.host = h; return r.exec },
		Store:       store, Events: r.events, Ended: func(run cascade.Run) { r.ended <- run },
	})
	return r
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// run runs the Manager until the test ends.
func (r *managerRig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.m.Run(ctx); err != nil {
			r.t.Error(err)
		}
	}()
	r.t.Cleanup(func() { cancel(); <-done })
}

func (r *managerRig) launch() cascade.Run {
	r.t.Helper()
	run, err := r.m.Launch(context.Background(), runs.LaunchInput{TraceID: quickstartID, SimConfig: simconfigtest.H100})
	if err != nil {
		r.t.Fatal(err)
	}
	return run
}

func (r *managerRig) get(id string) cascade.Run {
	r.t.Helper()
	run, err := r.d.Run(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return run
}

// nextStart is the job of the next Start call.
func (r *managerRig) nextStart() runs.Job {
	r.t.Helper()
	select {
	case j := <-r.exec.started:
		return j
	case <-time.After(10 * time.Second):
		r.t.Fatal("no job started")
		return runs.Job{}
	}
}

// noStart fails if a Start call has begun.
func (r *managerRig) noStart() {
	r.t.Helper()
	select {
	case j := <-r.exec.started:
		r.t.Fatalf("run %s started", j.Run.ID)
	default:
	}
}

// running makes the job's Start commit its run RUNNING, and returns once
// it has.
func (r *managerRig) running(id string) {
	r.t.Helper()
	committed := make(chan struct{})
	defer func() { <-committed }()
	r.exec.turn(id) <- func(ctx context.Context, h runs.Host) {
		if _, _, err := h.UpdateRun(ctx, id, func(run *cascade.Run) error { run.State = cascade.RunRunning; return nil }); err != nil {
			r.t.Error(err)
		}
		close(committed)
		select {
		case next := <-r.exec.turn(id): // the test's next word for this job
			next(ctx, h)
		case <-ctx.Done():
		}
	}
}

// TestManagerHandsPreparedJobsToTheExecutor: queued runs go to the
// executor in launch order, at most Slots at once, each with its
// directory made, its kernel list and config files in it, and the number
// of kernels it simulates.
func TestManagerHandsPreparedJobsToTheExecutor(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 2)
	r.run()
	var ids []string
	for range 3 {
		ids = append(ids, r.launch().ID)
	}
	a, b := r.nextStart(), r.nextStart()
	if a.Run.ID != ids[0] {
		a, b = b, a // the two start at once
	}
	if got := []string{a.Run.ID, b.Run.ID}; !slices.Equal(got, ids[:2]) {
		t.Fatalf("started %v, want %v", got, ids[:2])
	}
	r.noStart() // two slots
	for _, j := range []runs.Job{a, b} {
		if j.Total != 4 || j.Config.Name != simconfigtest.H100 || j.Log != r.m.Logs().LogPath(j.Run.ID) || filepath.Dir(j.Log) != j.Dir {
			t.Fatalf("job %+v", j)
		}
		for _, f := range []string{j.KernelList, filepath.Join(j.Dir, "gpgpusim.config")} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("job of run %s: %v", j.Run.ID, err)
			}
		}
	}
	r.exec.turn(a.Run.ID) <- func(ctx context.Context, h runs.Host) {
		h.Finish(ctx, a.Run.ID, runs.End{State: cascade.RunFailed, Error: "it broke"})
	}
	if c := r.nextStart(); c.Run.ID != ids[2] {
		t.Fatalf("third start: %s, want %s", c.Run.ID, ids[2])
	}
	if got := r.get(a.Run.ID); got.State != cascade.RunFailed || cascade.Deref(got.Error) != "it broke" || got.FinishedAt == nil {
		t.Fatalf("finished run: %+v", got)
	}
	if ended := <-r.ended; ended.ID != a.Run.ID {
		t.Fatalf("ended %s, want %s", ended.ID, a.Run.ID)
	}
}

// TestAlreadyOver: the conflict of acting on a run that is over says its
// state in English, for each final state.
func TestAlreadyOver(t *testing.T) {
	for s, want := range map[cascade.RunState]string{
		cascade.RunSucceeded: `run "r-1" has already succeeded`,
		cascade.RunFailed:    `run "r-1" has already failed`,
		cascade.RunCancelled: `run "r-1" has already been cancelled`,
	} {
		err := runs.AlreadyOver("r-1", s)
		if cascade.ErrorCode(err) != cascade.ECONFLICT || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want CONFLICT %q", s, err, want)
		}
	}
}

// TestManagerCancel: a queued run no executor has is cancelled by the
// Manager at once, never reaching the executor; a started one (running,
// or queued with a job) is the executor's to cancel; a run over is a
// CONFLICT, for neither.
func TestManagerCancel(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	r.run()
	a, b := r.launch(), r.launch()
	r.nextStart()
	r.running(a.ID)

	got, err := r.m.Cancel(context.Background(), b.ID)
	if err != nil || got.State != cascade.RunCancelled || !strings.Contains(strings.Join(got.History, "\n"), "cancelled before it started") {
		t.Fatalf("queued run: %+v, %v", got, err)
	}
	if got, err := r.m.Cancel(context.Background(), a.ID); err != nil || got.State != cascade.RunRunning {
		t.Fatalf("running run: %+v, %v", got, err)
	}
	withJob := r.launch()
	if _, _, err := r.d.UpdateRun(context.Background(), withJob.ID, func(run *cascade.Run) error {
		run.Slurm.JobID = cascade.Ptr(int64(7))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.m.Cancel(context.Background(), withJob.ID); err != nil || got.State != cascade.RunQueued {
		t.Fatalf("queued run with a job: %+v, %v", got, err)
	}
	if _, err := r.m.Cancel(context.Background(), b.ID); cascade.ErrorCode(err) != cascade.ECONFLICT ||
		!strings.HasSuffix(err.Error(), fmt.Sprintf("run %q has already been cancelled", b.ID)) {
		t.Fatalf("cancel of a cancelled run: %v, want CONFLICT: has already been cancelled", err)
	}
	r.exec.mu.Lock()
	defer r.exec.mu.Unlock()
	if want := [][]string{{a.ID}, {withJob.ID}}; !slices.EqualFunc(r.exec.cancelled, want, slices.Equal) {
		t.Fatalf("the executor was asked to cancel %v, want %v", r.exec.cancelled, want)
	}
}

// TestCancelSweepOver: cancelling a sweep cancels the runs not over; a
// sweep with none left (all over) is a CONFLICT, as cancelling a run that
// is over is; an unknown one NOT_FOUND.
func TestCancelSweepOver(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	ctx := context.Background()
	w := runs.NewSweeps(r.m)
	s, err := w.LaunchSweep(ctx, runs.SweepInput{TraceIDs: []string{quickstartID}, SimConfigs: []string{simconfigtest.H100, simconfigtest.QV100}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CancelSweep(ctx, s.ID); err != nil {
		t.Fatalf("cancel of a queued sweep: %v", err)
	}
	want := fmt.Sprintf("sweep %q is already over: none of its runs is queued or running", s.ID)
	if _, err := w.CancelSweep(ctx, s.ID); cascade.ErrorCode(err) != cascade.ECONFLICT || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("cancel of a sweep over: %v, want CONFLICT %q", err, want)
	}
	if _, err := w.CancelSweep(ctx, "nope"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Fatalf("cancel of an unknown sweep: %v, want NOT_FOUND", err)
	}
}

// TestManagerRestart: a run left running without a job runs again from
// the beginning; the executor is given the queued runs in launch order
// and the running ones with a job to reattach to, and the queue starts
// what it says to start.
func TestManagerRestart(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	ctx := context.Background()
	store := func(state cascade.RunState, job *int64) cascade.Run {
		run := cascade.Run{ID: cascade.NewID(cascade.RunIDPrefix), TraceID: quickstartID, SimConfig: simconfigtest.H100,
			State: state, Executor: "fake", History: []string{}}
		run.Slurm.JobID = job
		if err := r.d.CreateRun(ctx, &run); err != nil {
			t.Fatal(err)
		}
		return run
	}
	child := store(cascade.RunRunning, nil)
	job := store(cascade.RunRunning, cascade.Ptr(int64(1)))
	queued := store(cascade.RunQueued, nil)
	queuedJob := store(cascade.RunQueued, cascade.Ptr(int64(2)))
	store(cascade.RunSucceeded, nil)
	r.exec.startNow = []string{queued.ID}
	r.run()

	if got := r.nextStart(); got.Run.ID != queued.ID {
		t.Fatalf("started %s first, want %s", got.Run.ID, queued.ID)
	}
	r.exec.mu.Lock()
	var left []string
	for _, run := range r.exec.reattach {
		left = append(left, run.ID)
	}
	r.exec.mu.Unlock()
	if want := []string{job.ID, child.ID, queued.ID, queuedJob.ID}; !slices.Equal(left, want) {
		t.Fatalf("reattach given %v, want %v", left, want)
	}
	got := r.get(child.ID)
	if got.State != cascade.RunQueued || len(got.History) != 1 || !strings.Contains(got.History[0], "runs again from the beginning") {
		t.Fatalf("run left running without a job: %+v", got)
	}
}

// TestManagerRefusesConfigsTheExecutorCannotStart: a config the
// executor cannot start jobs under refuses launches and sweeps, naming
// the config and the executor's reason; nothing is stored.
func TestManagerRefusesConfigsTheExecutorCannotStart(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	r.exec.configErr = errors.New("options.conf:2: mem=lots: want megabytes")
	_, err := r.m.Launch(context.Background(), runs.LaunchInput{TraceID: quickstartID, SimConfig: simconfigtest.H100})
	want := "simConfig: " + simconfigtest.H100 + ": options.conf:2: mem=lots"
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), want) {
		t.Fatalf("launch: %v, want BAD_USER_INPUT with %q", err, want)
	}
	_, err = runs.NewSweeps(r.m).LaunchSweep(context.Background(), runs.SweepInput{TraceIDs: []string{quickstartID}, SimConfigs: []string{simconfigtest.H100}})
	want = "simConfigs[0]: " + simconfigtest.H100 + ": options.conf:2: mem=lots"
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), want) {
		t.Fatalf("sweep: %v, want BAD_USER_INPUT with %q", err, want)
	}
	if rs, err := r.d.TraceRuns(context.Background(), quickstartID); err != nil || len(rs) != 0 {
		t.Fatalf("runs stored: %v, %v", rs, err)
	}
}

// TestManagerRemoveTraceWaitsForTheExecutor: removing a trace cancels
// its queued runs, has the executor remove its started ones, waits for
// their Start calls to return, and records no end an executor reports
// meanwhile: the runs are deleted and RunRemoved published.
func TestManagerRemoveTraceWaitsForTheExecutor(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	r.run()
	a, b := r.launch(), r.launch()
	r.nextStart()
	r.running(a.ID)

	removed := make(chan error)
	go func() { removed <- r.m.RemoveTrace(context.Background(), quickstartID) }()
	testkit.Eventually(t, 10*time.Second, "the executor asked to remove the running run", func() bool {
		r.exec.mu.Lock()
		defer r.exec.mu.Unlock()
		return slices.Contains(r.exec.removed, a.ID)
	})
	select {
	case err := <-removed:
		t.Fatalf("RemoveTrace returned (%v) while the executor still had the run", err)
	default:
	}
	// The job ends as its simulator is stopped; its end is not recorded.
	r.exec.turn(a.ID) <- func(ctx context.Context, h runs.Host) {
		h.Finish(ctx, a.ID, runs.End{State: cascade.RunCancelled})
	}
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	if got := r.events.removed(); !slices.Equal(got, []string{a.ID, b.ID}) {
		t.Fatalf("RunRemoved for %v, want %v", got, []string{a.ID, b.ID})
	}
	select {
	case run := <-r.ended:
		t.Fatalf("end recorded for run %s, removed with its trace", run.ID)
	default:
	}
	if _, err := r.d.Run(context.Background(), a.ID); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Fatalf("run %s: %v, want NOT_FOUND", a.ID, err)
	}
}

// TestJobCarriesTheConfigsRecentPeakMemory: a job's PeakRSS is the
// largest peak of the last runs of its trace and config, or of its config
// on other traces when its trace has none; 0 when no run recorded one.
func TestJobCarriesTheConfigsRecentPeakMemory(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 1)
	r.run()
	ctx := context.Background()
	r.launch()
	j := r.nextStart()
	if j.PeakRSS != 0 {
		t.Fatalf("PeakRSS %d with no run recorded, want 0", j.PeakRSS)
	}
	done := func(j runs.Job) { r.exec.turn(j.Run.ID) <- func(context.Context, runs.Host) {} }
	done(j)
	for i, p := range []struct {
		trace string
		peak  int64
	}{{"other", 3 << 30}, {quickstartID, 1 << 30}} {
		run := &cascade.Run{ID: fmt.Sprint("done", i), TraceID: p.trace, SimConfig: simconfigtest.H100, State: cascade.RunSucceeded,
			Executor: "fake", Figures: cascade.RunFigures{PeakRSSBytes: p.peak}}
		if err := r.d.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			r.launch()
			j := r.nextStart()
			if j.PeakRSS != 3<<30 {
				t.Fatalf("PeakRSS %d, want the config's 3 GiB on another trace", j.PeakRSS)
			}
			done(j)
		}
	}
	r.launch()
	if j := r.nextStart(); j.PeakRSS != 1<<30 {
		t.Fatalf("PeakRSS %d, want its own trace's 1 GiB", j.PeakRSS)
	}
}
