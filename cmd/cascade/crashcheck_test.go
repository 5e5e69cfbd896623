package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "github.com/glebarez/go-sqlite"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/testkit"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// noOrphans: no process started for this data directory (post-processor,
// simulator) outlives the server that started it. With slurmJobs, the
// processes of Slurm's jobs (descendants of slurmstepd, or holding a job's
// SLURM_JOB_ID: a cancelled job's simulator is reparented once slurmstepd
// is done with it, while it is still being killed) are let be: they are
// the cluster's, not the server's.
func (c *crashRig) noOrphans(when string, slurmJobs bool) {
	c.t.Helper()
	orphans := func() string {
		var left []string
		for _, line := range testkit.ProcsIn(c.dataDir) {
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
			if why := uploadedMetadataDiffers(done, src); why != "" {
				t.Errorf("%s: metadata.json in the bucket is not the one uploading the source writes: %s", id, why)
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

// uploadedMetadataDiffers says how the metadata.json an upload of the
// trace directory src stored (done) differs from what it writes ("" when
// it does not): the source's fields, and a files list of every file
// uploaded, metadata.json aside, with its size (cascade upload rewrites
// the file, so its bytes are not the source's).
func uploadedMetadataDiffers(done []byte, src string) string {
	var got, want map[string]json.RawMessage
	if err := json.Unmarshal(done, &got); err != nil {
		return err.Error()
	}
	b, err := os.ReadFile(filepath.Join(src, "metadata.json"))
	if err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(b, &want); err != nil {
		return err.Error()
	}
	for k, v := range want {
		if k == "files" {
			continue
		}
		var a, b bytes.Buffer
		if json.Compact(&a, v) != nil || json.Compact(&b, got[k]) != nil || a.String() != b.String() {
			return fmt.Sprintf("%q is %s, the source's %s", k, got[k], v)
		}
	}
	var files []struct {
		Path string
		Size int64
	}
	if err := json.Unmarshal(got["files"], &files); err != nil {
		return "files: " + err.Error()
	}
	listed := map[string]int64{}
	for _, f := range files {
		listed[f.Path] = f.Size
	}
	n := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel = filepath.ToSlash(rel); rel == "metadata.json" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if size, ok := listed[rel]; !ok || size != info.Size() {
			return fmt.Errorf("files lists %s as %d bytes (listed %v), the source's is %d", rel, size, ok, info.Size())
		}
		n++
		return nil
	})
	switch {
	case err != nil:
		return err.Error()
	case n != len(files):
		return fmt.Sprintf("files lists %d files, the source has %d", len(files), n)
	}
	return ""
}
