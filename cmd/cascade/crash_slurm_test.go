package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/runs/slurmexec"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

func TestMain(m *testing.M) { slurmtest.Main(m) }

// TestCrashRecoverySlurm is TestCrashRecovery with the runs on a real
// one-node Slurm cluster (scripts/slurm.sh): the kills land while runs are
// submitted — between sbatch queueing a job and the server recording its
// id too, a window the sbatch wrapper below widens to 300 ms — pending,
// running and ending on Slurm, as well as during uploads and
// post-processing. Jobs go on while the server is down. At the end it
// checks, besides TestCrashRecovery's invariants, that every run was
// submitted exactly once (sbatch's answers, squeue and sacct by job name,
// and the jobs that started, each counted), that its recorded job is that
// one, that no job is left pending or running and no simulator process
// is left, and that the database's rows agree with each other.
//
// CASCADE_CRASH_SLURM_TRIALS sets the number of kills per database
// (default 4; `make crash` runs more); CASCADE_CRASH_SEED replays.
func TestCrashRecoverySlurm(t *testing.T) {
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	crashTest(t, "CASCADE_CRASH_SLURM_TRIALS", 4, slurmtest.Start(t))
}

// slurmCrash is the Slurm side of a crash rig: wrappers of Slurm's
// commands that record every job sbatch queued, and a simulator wrapper
// that records every job that started.
type slurmCrash struct {
	t       *testing.T
	cluster *slurmtest.Cluster
	dir     string // the wrappers and their records
	env     []string
	checked int // runs whose jobs settle counted
}

func newSlurmCrash(t *testing.T, cluster *slurmtest.Cluster, sim string) *slurmCrash {
	dir := t.TempDir()
	s := &slurmCrash{t: t, cluster: cluster, dir: dir}
	if err := os.Mkdir(filepath.Join(dir, "inflight"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sbatch", "squeue", "sacct", "scancel", "scontrol"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"\n", real)
		if name == "scancel" {
			// Every scancel is told on failure.
			script = fmt.Sprintf("#!/bin/sh\necho \"$(date +%%T.%%N) scancel $*\" >>%s/scancels\nexec %s \"$@\"\n", dir, real)
		}
		if name == "sbatch" {
			// inflight/PID says "sbatch" while sbatch runs and "queued"
			// once the job is queued and its id not yet handed to the
			// server; submitted lists "JOBID SCRIPT" for every job queued.
			script = fmt.Sprintf(`#!/bin/sh
m=%[1]s/inflight/$$
echo sbatch >"$m"
out=$(%[2]s "$@") || { rc=$?; rm -f "$m"; exit $rc; }
for a in "$@"; do script=$a; done
echo "$out $script" >>%[1]s/submitted
echo queued >"$m"
sleep 0.3
rm -f "$m"
echo "$out"
`, dir, real)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Every job that starts the simulator says so in started.
	simWrapper := filepath.Join(dir, "sim")
	wrapper := fmt.Sprintf("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_NAME\" >>%s/started\nexec env FAKESIM_MODE=slow FAKESIM_DELAY=150ms %s \"$@\"\n", dir, sim)
	if err := os.WriteFile(simWrapper, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	s.env = []string{
		"CASCADE_EXECUTOR=slurm", "CASCADE_SLURM_BIN=" + bin, "SLURM_CONF=" + cluster.Conf(),
		"CASCADE_SLURM_POLL_INTERVAL=300ms", "CASCADE_SLURM_TIMEOUT=5s",
		"CASCADE_SIM_CMD=" + simWrapper,
	}
	return s
}

// noteWhatIsUnderway counts, just before a kill, the kills that land
// while a job is pending or running on Slurm, or has ended there while
// its run is not over yet.
func (s *slurmCrash) noteWhatIsUnderway(c *crashRig) {
	var r struct {
		Runs struct{ Nodes []crashRun }
	}
	if _, err := c.query(`{ runs(first: 5000) { nodes { id state slurm { jobId } } } }`, nil, &r); err != nil {
		return
	}
	out, err := s.cluster.Try("squeue", "-h", "--states=all", "-o", "%i %T")
	if err != nil {
		return
	}
	states := map[string]string{}
	for line := range strings.Lines(out) {
		if id, st, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			states[id] = st
		}
	}
	under := map[string]bool{}
	for _, n := range r.Runs.Nodes {
		if n.Slurm == nil || n.State == "SUCCEEDED" || n.State == "FAILED" || n.State == "CANCELLED" {
			continue
		}
		switch st := states[strconv.FormatInt(n.Slurm.JobID, 10)]; st {
		case "PENDING", "RUNNING":
			under["job "+st] = true
		case "COMPLETING", "COMPLETED":
			under["job ended, run "+n.State] = true
		}
	}
	for k := range under {
		c.killedDuring[k]++
	}
}

// noteSubmissionsInFlight counts, right after a kill, the kills that
// landed while sbatch ran and after it queued a job but before the server
// heard the job's id.
func (s *slurmCrash) noteSubmissionsInFlight(c *crashRig) {
	ents, _ := os.ReadDir(filepath.Join(s.dir, "inflight"))
	under := map[string]bool{}
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(s.dir, "inflight", e.Name()))
		switch strings.TrimSpace(string(data)) {
		case "sbatch":
			under["sbatch running"] = true
		case "queued":
			under["job queued, id not recorded"] = true
		}
	}
	for k := range under {
		c.killedDuring[k]++
	}
}

// settle checks, once every run is over, that each was submitted once as
// the job it records, and that no job is left on the cluster.
func (s *slurmCrash) settle(c *crashRig, all []crashRun) {
	t := s.t
	// Jobs sbatch queued, by run: the script is work/runs/RUN/job.sbatch.
	submitted := map[string][]string{}
	data, err := os.ReadFile(filepath.Join(s.dir, "submitted"))
	if err != nil {
		t.Fatalf("no job was submitted: %v", err)
	}
	var jobs []string
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("submitted: %q", line)
		}
		id, _, _ := strings.Cut(f[0], ";")
		run := filepath.Base(filepath.Dir(f[1]))
		submitted[run] = append(submitted[run], id)
		jobs = append(jobs, id)
	}
	// Jobs that started the simulator, by job name.
	started := map[string][]string{}
	data, _ = os.ReadFile(filepath.Join(s.dir, "started"))
	for line := range strings.Lines(string(data)) {
		if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			started[name] = append(started[name], id)
		}
	}
	// Jobs Slurm knows, by name: squeue holds those that ended within
	// MinJobAge, sacct (with accounting) all of them.
	named := map[string]map[string]bool{}
	addNamed := func(out string, sep string) {
		for line := range strings.Lines(out) {
			id, name, ok := strings.Cut(strings.TrimSpace(line), sep)
			if !ok || strings.Contains(id, ".") {
				continue
			}
			if named[name] == nil {
				named[name] = map[string]bool{}
			}
			named[name][id] = true
		}
	}
	addNamed(s.cluster.Command(t, "squeue", "-h", "--states=all", "-o", "%i %j"), " ")
	if s.cluster.Accounting() {
		addNamed(s.cluster.Command(t, "sacct", "-n", "-X", "-P", "--starttime=now-2hours", "-o", "JobID,JobName"), "|")
	}

	known := map[string]bool{}
	for _, r := range all {
		known[r.ID] = true
		name := slurmexec.JobName(r.ID)
		sub := submitted[r.ID]
		if len(sub) != 1 {
			t.Errorf("run %s: sbatch queued %d jobs for it %v", r.ID, len(sub), sub)
			continue
		}
		if r.Slurm == nil || strconv.FormatInt(r.Slurm.JobID, 10) != sub[0] {
			t.Errorf("run %s records job %+v, sbatch queued job %s", r.ID, r.Slurm, sub[0])
		}
		if st := started[name]; len(st) != 1 || st[0] != sub[0] {
			t.Errorf("run %s: jobs %v started, want job %s once", r.ID, st, sub[0])
		}
		if n := named[name]; len(n) != 1 || !n[sub[0]] {
			t.Errorf("run %s: Slurm knows jobs %v by its name, want job %s alone", r.ID, slices.Sorted(maps.Keys(n)), sub[0])
		}
		s.checked++
	}
	for run, ids := range submitted {
		if !known[run] {
			t.Errorf("jobs %v were submitted for %s, which is no run", ids, run)
		}
	}
	if t.Failed() {
		data, _ := os.ReadFile(filepath.Join(s.dir, "scancels"))
		t.Logf("scancel calls:\n%s", data)
	}
	// Every run is over: none of their jobs may be pending or running.
	out := s.cluster.Command(t, "squeue", "-h", "-o", "%i %j %T")
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 3 && slices.Contains(jobs, f[0]) && f[2] != "COMPLETED" {
			t.Errorf("job %s (%s) is left %s after every run ended", f[0], f[1], f[2])
		}
	}
}

// inSlurmJob says whether the process pid was started by Slurm for a job:
// its environment holds SLURM_JOB_ID, which Cascade never sets for a
// simulator it runs itself.
func inSlurmJob(pid string) bool {
	env, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		return false
	}
	for kv := range strings.SplitSeq(string(env), "\x00") {
		if strings.HasPrefix(kv, "SLURM_JOB_ID=") {
			return true
		}
	}
	return false
}

// underSlurmstepd says whether the process pid descends from slurmstepd:
// it is a Slurm job's.
func underSlurmstepd(pid string) bool {
	for range 64 {
		if pid == "" || pid == "0" || pid == "1" {
			return false
		}
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			return false
		}
		if strings.HasPrefix(strings.TrimSpace(string(comm)), "slurmstepd") {
			return true
		}
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			return false
		}
		pid = f[1]
	}
	return false
}
