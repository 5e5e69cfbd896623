package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
	"github.com/cascade-sim/cascade/upload"
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
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	crashTest(t, "CASCADE_CRASH_TRIALS", 8, nil)
}

// crashTest runs a crash rig on each database: trialsEnv's number of kills
// (def without it), seeded by CASCADE_CRASH_SEED or anew, with the runs
// on cluster when it is not nil; then it checks the end and logs what it
// checked.
func crashTest(t *testing.T, trialsEnv string, def int, cluster *slurmtest.Cluster) {
	trials := envCount(t, trialsEnv, def, 1) // kills per database
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

// envCount is the whole number the environment variable name holds, at
// least least, or def when it is unset.
func envCount(t testing.TB, name string, def, least int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		t.Fatalf("%s=%q: want a whole number of at least %d", name, v, least)
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
