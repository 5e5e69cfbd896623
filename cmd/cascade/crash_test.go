package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
	"github.com/cascade-sim/cascade/upload"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// TestCrashRecovery kills `cascade serve` with SIGKILL at random moments
// while traces arrive (copied into the bucket as `cascade upload` does, and
// over the S3 endpoint with `cascade upload --endpoint`), while the built-in
// post-processor runs and while simulations run, and restarts it each time.
// After every kill it checks that no post-processor or simulator outlived
// the server; after every restart, that every trace on disk is in the API.
// At the end, with the interrupted S3 uploads resumed, it checks that every
// trace reached READY (none stuck in PROCESSING), that every run whose
// launch was acknowledged exists exactly once and SUCCEEDED, and that the
// database is intact. It runs on SQLite and, when CASCADE_TEST_POSTGRES_DSN
// is set, on PostgreSQL.
//
// CASCADE_CRASH_TRIALS sets the number of kills per database (default 8;
// `make crash` runs more) and CASCADE_CRASH_SEED replays a failing sequence.
func TestCrashRecovery(t *testing.T) {
	crashTest(t, "CASCADE_CRASH_TRIALS", 8, nil)
}

// crashTest runs a crash rig on each database: trialsEnv's number of kills
// (def without it), seeded by CASCADE_CRASH_SEED or anew, with the runs
// on cluster when it is not nil; then it checks the end and logs what it
// checked.
func crashTest(t *testing.T, trialsEnv string, def int, cluster *slurmtest.Cluster) {
	trials := crashTrials(t, trialsEnv, def)
	seed := crashSeed(t)
	for name, url := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Logf("CASCADE_CRASH_SEED=%d %s=%d", seed, trialsEnv, trials)
			c := newCrashRig(t, url, seed, cluster)
			for i := range trials {
				c.trial(i)
			}
			c.settle()
			t.Logf("kills that landed while something was underway: %v", c.killedDuring)
			on, orphans, jobs := "", "no orphaned post-processor or simulator after each kill", ""
			if c.slurm != nil {
				on, orphans = " on Slurm", "no orphaned post-processor after each kill"
				jobs = fmt.Sprintf("%d runs each submitted once (sbatch, squeue+sacct by name, jobs started) as the job it records, "+
					"no job left pending or running, no simulator left, ", c.slurm.checked)
			}
			t.Logf("%d kills survived%s; invariants checked: %s, every trace on disk in the API after each restart, "+
				"%d traces all READY, %d acknowledged runs each present once and SUCCEEDED, %sno trace left PROCESSING, %s, "+
				"rows consistent (no run of a missing trace, no job id on two runs)",
				trials, on, orphans, len(c.traceIDs()), len(c.acked), jobs, c.intactWord())
		})
	}
}

// crashTrials is the number of kills per database: env's value, or def.
func crashTrials(t *testing.T, env string, def int) int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", env, v)
	}
	return n
}

// crashSeed is CASCADE_CRASH_SEED, or a new seed.
func crashSeed(t *testing.T) uint64 {
	v := os.Getenv("CASCADE_CRASH_SEED")
	if v == "" {
		return uint64(time.Now().UnixNano())
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("CASCADE_CRASH_SEED=%q: %v", v, err)
	}
	return n
}

// intactWord says how the database was found intact.
func (c *crashRig) intactWord() string {
	if c.sqlite {
		return "SQLite's integrity_check ok"
	}
	return c.pgIntact
}

// crashClient gives up on a server that was killed mid-request.
var crashClient = &http.Client{Timeout: 10 * time.Second}

type crashRig struct {
	t       *testing.T
	rng     *rand.Rand // guarded by mu: the workers draw from it too
	dataDir string
	prefix  string
	env     []string
	s3Addr  string
	keys    []string

	sqlite   bool
	dbURL    string
	pgIntact string // how postgresIntact found the schema intact
	addr     string
	server   *exec.Cmd

	mu      sync.Mutex
	acked   map[string]bool   // runs whose launch the server acknowledged
	pending map[string]string // trace id -> source dir of an S3 upload that may be incomplete
	ready   []string          // traces seen READY, for launches

	// What was underway at the kills, so the log shows what was covered.
	killedDuring map[string]int

	// slurm is set when runs go to a Slurm cluster (TestCrashRecoverySlurm).
	slurm *slurmCrash
}

// noteWhatIsUnderway counts, just before a kill, the kills that land
// while a trace uploads or post-processes and while a run runs.
func (c *crashRig) noteWhatIsUnderway() {
	var r struct {
		Traces struct{ Nodes []struct{ State string } }
		Runs   struct{ Nodes []struct{ State string } }
	}
	if _, err := c.query(`{ traces(first: 1000) { nodes { state } } runs(first: 5000) { nodes { state } } }`, nil, &r); err != nil {
		return
	}
	under := map[string]bool{}
	for _, n := range r.Traces.Nodes {
		under["trace "+n.State] = true
	}
	for _, n := range r.Runs.Nodes {
		under["run "+n.State] = true
	}
	for _, k := range []string{"trace UPLOADING", "trace PROCESSING", "run QUEUED", "run RUNNING"} {
		if under[k] {
			c.killedDuring[k]++
		}
	}
	if c.slurm != nil {
		c.slurm.noteWhatIsUnderway(c)
	}
}

// newCrashRig starts the server on a fresh data directory and the database
// at dbURL (SQLite when empty); with a cluster, runs go to Slurm.
func newCrashRig(t *testing.T, dbURL string, seed uint64, cluster *slurmtest.Cluster) *crashRig {
	dataDir := t.TempDir()
	sim := fakesim.Build(t)
	c := &crashRig{
		t:       t,
		rng:     rand.New(rand.NewPCG(seed, 0x5eed)),
		dataDir: dataDir,
		prefix:  filepath.Join(dataDir, "s3", "cascade", "traces"),
		s3Addr:  freeAddr(t),
		keys:    []string{"CASCADE_S3_ACCESS_KEY=crashtestkey", "CASCADE_S3_SECRET_KEY=crashtestsecret0123456789"},
		acked:   map[string]bool{},
		pending: map[string]string{},

		killedDuring: map[string]int{},
	}
	c.env = append([]string{
		"CASCADE_SIM_CMD=env FAKESIM_MODE=slow FAKESIM_DELAY=150ms " + sim,
		"CASCADE_SIM_CONFIGS_DIR=" + simconfigtest.Write(t, t.TempDir()),
		"CASCADE_S3_ADDR=" + c.s3Addr,
		"CASCADE_RUN_CONCURRENCY=2",
	}, c.keys...)
	c.dbURL = dbURL
	if dbURL != "" {
		c.env = append(c.env, "CASCADE_DATABASE_URL="+dbURL)
	} else {
		c.sqlite = true
	}
	if cluster != nil {
		c.slurm = newSlurmCrash(t, cluster, sim)
		c.env = append(c.env, c.slurm.env...)
	}
	c.start()
	t.Cleanup(func() { c.noOrphans("at the end", false) })
	c.firstReadyTrace()
	return c
}

// firstReadyTrace uploads a trace and waits for it to be READY, so that
// every trial launches runs: on a loaded machine a trial's trace may
// not finish post-processing before its kill, and trials whose kills all
// came first launched nothing (CI, load 26 on 2 cores: "no run was
// launched").
func (c *crashRig) firstReadyTrace() {
	c.diskUpload("first")
	testkit.Eventually(c.t, 120*time.Second, "the first trace READY", func() bool {
		c.refreshReady()
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.ready) > 0
	})
}

func (c *crashRig) start() {
	c.addr, c.server = serveProcess(c.t, c.dataDir, c.env...)
}

// trial starts work of every kind, kills the server at a random moment
// while it goes on, and restarts it.
func (c *crashRig) trial(i int) {
	t := c.t
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	work := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }

	// A trace copied into the bucket: the copy goes on while the server is
	// down, as a profiler's uploader would.
	work(func() { c.diskUpload(fmt.Sprintf("disk-%02d", i)) })
	// A trace over S3: the upload fails when the server dies.
	work(func() { c.s3Upload(ctx, fmt.Sprintf("s3-%02d", i)) })
	// Runs on traces that are ready.
	work(func() { c.launchRuns(ctx) })

	c.mu.Lock()
	wait := time.Duration(c.rng.Int64N(int64(2500 * time.Millisecond)))
	c.mu.Unlock()
	time.Sleep(wait)
	c.noteWhatIsUnderway()
	if err := c.server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.server.Wait()
	if c.slurm != nil {
		c.slurm.noteSubmissionsInFlight(c)
	}
	stop()
	wg.Wait()
	// Slurm's jobs outlive the server by design; nothing else may.
	c.noOrphans(fmt.Sprintf("after kill %d", i), c.slurm != nil)

	c.start()
	c.everyTraceOnDiskListed(fmt.Sprintf("after restart %d", i))
}

// diskUpload writes a raw trace of random size and copies it into the
// bucket with `cascade upload`'s code.
func (c *crashRig) diskUpload(id string) {
	src := c.rawTrace()
	if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: c.prefix, RunName: id}); err != nil {
		c.t.Errorf("upload %s: %v", id, err)
	}
}

// s3Upload uploads a raw trace with `cascade upload --endpoint`; one the
// kill interrupts is resumed in settle.
func (c *crashRig) s3Upload(ctx context.Context, id string) {
	src := c.rawTrace()
	c.mu.Lock()
	c.pending[id] = src
	c.mu.Unlock()
	if c.s3Run(ctx, id, src) == nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
}

func (c *crashRig) s3Run(ctx context.Context, id, src string) error {
	cmd := exec.CommandContext(ctx, testkit.Program(c.t, "./cmd/cascade"), "upload", "--endpoint", "http://"+c.s3Addr, "--run-name", id, src)
	cmd.Env = append(os.Environ(), c.keys...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("cascade upload --endpoint %s: %v\n%s", id, err, out)
	}
	return nil
}

// rawTrace generates a raw trace: mostly small, sometimes big enough that
// the kill lands while the built-in post-processor works on it.
func (c *crashRig) rawTrace() string {
	c.mu.Lock()
	size := []string{"", "", "4M", "12M"}[c.rng.IntN(4)]
	c.mu.Unlock()
	src := c.t.TempDir()
	args := []string{"gentrace", "-kernels", "2"}
	if size != "" {
		args = append(args, "-size", size)
	}
	gen := exec.Command(testkit.Program(c.t, "./cmd/cascade"), append(args, filepath.Join(src, "traces"))...)
	if out, err := gen.CombinedOutput(); err != nil {
		c.t.Fatalf("gentrace: %v\n%s", err, out)
	}
	meta := `{"model": "vecAdd", "gpu": "NVIDIA TITAN X (Pascal)", "trace_gpu_arch": "sm_61", "suggested_sim_config": "SM6_TITANX"}`
	if err := os.WriteFile(filepath.Join(src, "metadata.json"), []byte(meta), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return src
}

// launchRuns launches runs on ready traces until the server dies,
// remembering every launch it acknowledged.
func (c *crashRig) launchRuns(ctx context.Context) {
	for ctx.Err() == nil {
		c.mu.Lock()
		var trace string
		if len(c.ready) > 0 {
			trace = c.ready[c.rng.IntN(len(c.ready))]
		}
		c.mu.Unlock()
		if trace == "" {
			c.refreshReady()
		} else if id, ok := c.launch(trace); ok {
			c.mu.Lock()
			c.acked[id] = true
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// launch asks for a run; ok is false when the server did not answer
// (killed meanwhile), and the test fails when it refused.
func (c *crashRig) launch(trace string) (string, bool) {
	var l struct{ LaunchRun struct{ ID string } }
	// rerun: every launch simulates, as the crash checks count on; an
	// identical succeeded run would otherwise be reused.
	errs, err := c.query(`mutation($t: ID!) { launchRun(input: {traceId: $t, simConfig: "SM6_TITANX", rerun: true}) { id } }`, map[string]any{"t": trace}, &l)
	if err != nil || l.LaunchRun.ID == "" {
		return "", false
	}
	if len(errs) > 0 {
		c.t.Errorf("launch on %s refused: %v", trace, errs)
		return "", false
	}
	return l.LaunchRun.ID, true
}

func (c *crashRig) refreshReady() {
	var r struct {
		Traces struct{ Nodes []struct{ ID string } }
	}
	if _, err := c.query(`{ traces(state: READY, first: 1000) { nodes { id } } }`, nil, &r); err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ready = c.ready[:0]
	for _, n := range r.Traces.Nodes {
		if n.ID != "sample" && n.ID != ".sample" {
			c.ready = append(c.ready, n.ID)
		}
	}
}

// query posts a GraphQL request; err is a transport error (the server is
// gone), errs the GraphQL errors.
func (c *crashRig) query(q string, vars map[string]any, out any) (errs []string, err error) {
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	resp, err := crashClient.Post("http://"+c.addr+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	for _, e := range r.Errors {
		errs = append(errs, e.Message)
	}
	if out != nil && len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return errs, err
		}
	}
	return errs, nil
}

// noOrphans: no process started for this data directory (post-processor,
// simulator) outlives the server that started it. With slurmJobs, the
// processes of Slurm's jobs (descendants of slurmstepd, or holding a job's
// SLURM_JOB_ID: a cancelled job's simulator is reparented once slurmstepd
// is done with it, while it is still being killed) are let be: they are
// the cluster's, not the server's.
func (c *crashRig) noOrphans(when string, slurmJobs bool) {
	c.t.Helper()
	orphans := func() string {
		out, _ := exec.Command("pgrep", "-af", c.dataDir).Output()
		var left []string
		for line := range strings.Lines(string(out)) {
			pid, _, _ := strings.Cut(line, " ")
			if slurmJobs && (underSlurmstepd(pid) || inSlurmJob(pid)) {
				continue
			}
			// A process that ended between pgrep and the looks above
			// outlived nothing: a Slurm job's, ending, was taken for an
			// orphan when its /proc entry went away under them (seed
			// 1796324452216626454: "environ: no such file or directory").
			if ended(pid) {
				continue
			}
			left = append(left, strings.TrimSpace(line)+" ["+describeProcess(pid)+"]")
		}
		return strings.Join(left, "\n")
	}
	deadline := time.Now().Add(10 * time.Second)
	for orphans() != "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if o := orphans(); o != "" {
		c.t.Fatalf("%s: processes outlived the server:\n%s", when, o)
	}
}

// ended says whether process pid is gone or a zombie: it runs no more.
func ended(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// describeProcess says, for a process reported as an orphan, what tells
// a Slurm job's process apart: its parent, state and SLURM_JOB_ID.
func describeProcess(pid string) string {
	d := ""
	if stat, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil {
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) >= 2 {
			comm, _ := os.ReadFile("/proc/" + f[1] + "/comm")
			d = fmt.Sprintf("state %s, parent %s (%s)", f[0], f[1], strings.TrimSpace(string(comm)))
		}
	}
	env, err := os.ReadFile("/proc/" + pid + "/environ")
	switch {
	case err != nil:
		d += ", environ: " + err.Error()
	case strings.Contains("\x00"+string(env), "\x00SLURM_JOB_ID="):
		d += ", has SLURM_JOB_ID"
	default:
		d += fmt.Sprintf(", no SLURM_JOB_ID in %d bytes of environ", len(env))
	}
	return d
}

// traceIDs lists the trace directories in the bucket: every directory
// holding a file that is not a dotfile is a trace.
func (c *crashRig) traceIDs() []string {
	ents, err := os.ReadDir(c.prefix)
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "sample" {
			continue
		}
		visible := false
		filepath.WalkDir(filepath.Join(c.prefix, e.Name()), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && !strings.Contains(p, "/.") {
				visible = true
				return filepath.SkipAll
			}
			return nil
		})
		if visible {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// apiTraces returns the state of every trace the API lists.
func (c *crashRig) apiTraces() map[string]string {
	var r struct {
		Traces struct{ Nodes []struct{ ID, State string } }
	}
	errs, err := c.query(`{ traces(first: 1000) { nodes { id state } } }`, nil, &r)
	if err != nil || len(errs) > 0 {
		c.t.Fatalf("traces: %v %v", err, errs)
	}
	m := map[string]string{}
	for _, n := range r.Traces.Nodes {
		m[n.ID] = n.State
	}
	return m
}

func (c *crashRig) everyTraceOnDiskListed(when string) {
	c.t.Helper()
	var missing []string
	testkit.Eventually(c.t, 20*time.Second, when+": every trace on disk in the API", func() bool {
		listed := c.apiTraces()
		missing = missing[:0]
		for _, id := range c.traceIDs() {
			if _, ok := listed[id]; !ok {
				missing = append(missing, id)
			}
		}
		return len(missing) == 0
	})
}

// settle resumes the interrupted S3 uploads, lets everything finish, and
// checks the end state.
func (c *crashRig) settle() {
	t := c.t
	for id, src := range c.pending {
		// The kill may land after the last PUT (metadata.json, sent last)
		// was stored and before its answer came back: the upload is
		// complete and cascade upload rightly refuses to redo it.
		if done, err := os.ReadFile(filepath.Join(c.prefix, id, "metadata.json")); err == nil {
			if want, err := os.ReadFile(filepath.Join(src, "metadata.json")); err != nil || !bytes.Equal(done, want) {
				t.Errorf("%s: metadata.json in the bucket is not the source's (%v)", id, err)
			}
			continue
		}
		if err := c.s3Run(context.Background(), id, src); err != nil {
			t.Fatalf("resume: %v", err)
		}
	}
	c.everyTraceOnDiskListed("at the end")
	var states map[string]string
	testkit.Eventually(t, 120*time.Second, "every trace READY", func() bool {
		states = c.apiTraces()
		for _, id := range c.traceIDs() {
			if states[id] != "READY" {
				return false
			}
		}
		return true
	})

	var runs []crashRun
	testkit.Eventually(t, 180*time.Second, "every run over", func() bool {
		var r struct {
			Runs struct{ Nodes []crashRun }
		}
		if errs, err := c.query(`{ runs(first: 5000) { nodes { id state error history slurm { jobId } } } }`, nil, &r); err != nil || len(errs) > 0 {
			t.Fatalf("runs: %v %v", err, errs)
		}
		runs = r.Runs.Nodes
		for _, r := range runs {
			if r.State == "QUEUED" || r.State == "RUNNING" {
				return false
			}
		}
		return true
	})
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.ID]++
		if r.State != "SUCCEEDED" {
			t.Errorf("run %s ended %s: %s; history %q", r.ID, r.State, cascade.Deref(r.Error), r.History)
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("run %s listed %d times", id, n)
		}
	}
	for id := range c.acked {
		if seen[id] == 0 {
			t.Errorf("run %s was acknowledged and is lost", id)
		}
	}
	if len(c.acked) == 0 {
		t.Errorf("no run was launched: the trials tested nothing about runs")
	}

	if c.slurm != nil {
		c.slurm.settle(c, runs)
	}

	// A graceful stop, then the database must be intact.
	c.server.Process.Signal(syscall.SIGTERM)
	c.server.Wait()
	// No simulator left, Slurm's jobs' included.
	c.noOrphans("after the last stop", false)
	if c.sqlite {
		c.sqliteIntact()
	} else {
		c.postgresIntact()
	}
	c.consistent()
}

// crashRun is a run as settle lists it.
type crashRun struct {
	ID, State string
	Error     *string
	History   []string
	Slurm     *struct{ JobID int64 }
}

// consistent checks the rows against each other, on SQLite and
// PostgreSQL alike: no run of a trace the database does not hold, no
// result row of a missing run, no kernel row outside a kernel set, every
// trace on one current set holding as many kernels as it says, no Slurm
// job recorded for two runs.
func (c *crashRig) consistent() {
	c.t.Helper()
	var db *sql.DB
	if c.sqlite {
		var err error
		if db, err = sql.Open("sqlite", filepath.Join(c.dataDir, "cascade.db")); err != nil {
			c.t.Fatal(err)
		}
	} else {
		g, err := gorm.Open(postgres.Open(c.dbURL), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			c.t.Fatal(err)
		}
		if db, err = g.DB(); err != nil {
			c.t.Fatal(err)
		}
	}
	defer db.Close()
	for what, q := range map[string]string{
		"runs of a missing trace":                           `SELECT COUNT(*) FROM runs r LEFT JOIN traces t ON t.id = r.trace_id WHERE t.id IS NULL`,
		"run kernel rows of a missing run":                  `SELECT COUNT(*) FROM run_kernels k LEFT JOIN runs r ON r.id = k.run_id WHERE r.id IS NULL`,
		"kernel rows of a missing kernel set":               `SELECT COUNT(*) FROM kernels k LEFT JOIN kernel_sets s ON s.id = k.set_id WHERE s.id IS NULL`,
		"traces on a missing or replaced kernel set":        `SELECT COUNT(*) FROM traces t LEFT JOIN kernel_sets s ON s.id = t.kernel_set_id WHERE t.kernel_set_id IS NOT NULL AND (s.id IS NULL OR s.state <> 'current')`,
		"current kernel sets of no trace":                   `SELECT COUNT(*) FROM kernel_sets s LEFT JOIN traces t ON t.kernel_set_id = s.id WHERE s.state = 'current' AND t.id IS NULL`,
		"kernel sets whose count is not their rows'":        `SELECT COUNT(*) FROM kernel_sets s WHERE s.state = 'current' AND s.n <> (SELECT COUNT(*) FROM kernels k WHERE k.set_id = s.id)`,
		"Slurm jobs recorded for two runs":                  `SELECT COUNT(*) FROM (SELECT slurm_job_id FROM runs WHERE slurm_job_id IS NOT NULL GROUP BY slurm_job_id HAVING COUNT(*) > 1) d`,
		"runs sharing a launch number":                      `SELECT COUNT(*) FROM (SELECT seq FROM runs GROUP BY seq HAVING COUNT(*) > 1) d`,
		"finished runs without an end time":                 `SELECT COUNT(*) FROM runs WHERE state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at IS NULL`,
		"succeeded runs with fewer kernels done than total": `SELECT COUNT(*) FROM runs WHERE state = 'SUCCEEDED' AND kernels_done <> kernels_total`,
	} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			c.t.Fatalf("%s: %v", what, err)
		}
		if n != 0 {
			c.t.Errorf("database: %d %s", n, what)
		}
	}
}

// postgresIntact is PostgreSQL's counterpart of SQLite's integrity_check,
// on the test's schema: amcheck's verify_heapam finds no corrupt tuple in
// any table, bt_index_check with heapallindexed finds every B-tree index
// well-formed and holding every row of its table, and no index is left
// invalid (as a CREATE INDEX CONCURRENTLY killed midway leaves one).
// Without amcheck (not installed, or no right to create it) the last
// check alone runs, and the log says so.
func (c *crashRig) postgresIntact() {
	c.t.Helper()
	g, err := gorm.Open(postgres.Open(c.dbURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		c.t.Fatal(err)
	}
	db, err := g.DB()
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	var invalid []string
	rows, err := db.Query(`SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)`)
	if err != nil {
		c.t.Fatal(err)
	}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		invalid = append(invalid, name)
	}
	if err := rows.Err(); err != nil {
		c.t.Fatal(err)
	}
	if len(invalid) > 0 {
		c.t.Errorf("PostgreSQL: invalid indexes %v", invalid)
	}
	// In public, not the test's schema (dropped at its end): an extension
	// is installed once per database. Tests creating it at the same time
	// may collide; whoever lost finds it there.
	db.Exec(`CREATE EXTENSION IF NOT EXISTS amcheck SCHEMA public`)
	var have bool
	if err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck')`).Scan(&have); err != nil {
		c.t.Fatal(err)
	}
	if !have {
		c.pgIntact = "PostgreSQL: every index valid (amcheck not available: heap and B-tree structure not verified)"
		c.t.Log(c.pgIntact)
		return
	}
	var tables, indexes, corrupt int
	if err := db.QueryRow(`SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&tables); err != nil {
		c.t.Fatal(err)
	}
	// verify_heapam returns a row per corrupt tuple.
	if err := db.QueryRow(`SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
		LATERAL public.verify_heapam(c.oid) v WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&corrupt); err != nil {
		c.t.Fatalf("verify_heapam: %v", err)
	}
	if corrupt > 0 {
		c.t.Errorf("PostgreSQL: verify_heapam reports %d corrupt tuples", corrupt)
	}
	// bt_index_check raises an error on the first fault it finds.
	if err := db.QueryRow(`SELECT COUNT(public.bt_index_check(c.oid, true)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
		WHERE n.nspname = current_schema() AND a.amname = 'btree'`).Scan(&indexes); err != nil {
		c.t.Errorf("PostgreSQL: bt_index_check: %v", err)
	}
	if tables == 0 || indexes == 0 {
		c.t.Fatalf("PostgreSQL: amcheck looked at %d tables and %d indexes of schema: not the test's schema", tables, indexes)
	}
	c.pgIntact = fmt.Sprintf("PostgreSQL's amcheck ok (%d tables' heaps, %d B-tree indexes holding every row, every index valid)", tables, indexes)
}

func (c *crashRig) sqliteIntact() {
	db, err := sql.Open("sqlite", filepath.Join(c.dataDir, "cascade.db"))
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		c.t.Fatal(err)
	}
	if res != "ok" {
		c.t.Fatalf("integrity_check: %s", res)
	}
}
