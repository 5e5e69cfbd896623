package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fixtures are real outputs of Slurm 22.05 (testdata/record.sh): one job
// in each state, named for it, on node "c41525".

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func byName(t *testing.T, sts []Status) map[string]Status {
	t.Helper()
	m := map[string]Status{}
	for _, st := range sts {
		if st.ID <= 0 {
			t.Errorf("job id %d in %+v", st.ID, st)
		}
		m[st.Name] = st
	}
	return m
}

// want is what a job's status must say; Node is checked to be the node
// when ran is set, empty otherwise.
type want struct {
	state     State
	slurm     string
	reason    string
	exit, sig int
	ran       bool
	partition string
}

func check(t *testing.T, sts map[string]Status, node string, wants map[string]want) {
	t.Helper()
	for name, w := range wants {
		st, ok := sts[name]
		if !ok {
			t.Errorf("%s: not in the output", name)
			continue
		}
		if st.State != w.state || st.SlurmState != w.slurm || st.Reason != w.reason ||
			st.ExitCode != w.exit || st.Signal != w.sig {
			t.Errorf("%s: %s (%s) reason %q exit %d signal %d, want %s (%s) reason %q exit %d signal %d",
				name, st.State, st.SlurmState, st.Reason, st.ExitCode, st.Signal,
				w.state, w.slurm, w.reason, w.exit, w.sig)
		}
		if w.partition != "" && st.Partition != w.partition {
			t.Errorf("%s: partition %q, want %q", name, st.Partition, w.partition)
		}
		switch {
		case w.ran && (st.Node != node || st.Start.IsZero()):
			t.Errorf("%s: node %q start %v, want node %s and a start", name, st.Node, st.Start, node)
		case !w.ran && (st.Node != "" || !st.Start.IsZero()):
			t.Errorf("%s: node %q start %v, want none", name, st.Node, st.Start)
		}
		if st.State.Done() && w.ran && st.End.Before(st.Start) {
			t.Errorf("%s: ended %v before it started %v", name, st.End, st.Start)
		}
		if !st.State.Done() && !st.End.IsZero() {
			t.Errorf("%s: %s with an end %v", name, st.State, st.End)
		}
	}
}

const fixtureNode = "c41525"

func TestParseSqueue(t *testing.T) {
	sts, err := parseSqueue(readFixture(t, "squeue.json"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, byName(t, sts), fixtureNode, map[string]want{
		"ok":        {state: Completed, slurm: "COMPLETED", exit: 0, ran: true, partition: "debug"},
		"fail":      {state: Failed, slurm: "FAILED", reason: "NonZeroExitCode", exit: 3, ran: true},
		"oom":       {state: OutOfMemory, slurm: "OUT_OF_MEMORY", reason: "OutOfMemory", exit: -1, ran: true},
		"timeout":   {state: Timeout, slurm: "TIMEOUT", reason: "TimeLimit", exit: -1, sig: 15, ran: true},
		"cancelled": {state: Cancelled, slurm: "CANCELLED", exit: -1, sig: 15, ran: true},
		"nodefail":  {state: Running, slurm: "RUNNING", exit: -1, ran: true, partition: "long"},
		"big":       {state: Running, slurm: "RUNNING", exit: -1, ran: true},
		"held":      {state: Pending, slurm: "PENDING", reason: "JobHeldUser", exit: -1},
		"resources": {state: Pending, slurm: "PENDING", reason: "Resources", exit: -1},
		"priority":  {state: Pending, slurm: "PENDING", reason: "Priority", exit: -1},
	})
}

func TestParseSqueueNodeFail(t *testing.T) {
	sts, err := parseSqueue(readFixture(t, "squeue-nodefail.json"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, byName(t, sts), fixtureNode, map[string]want{
		"nodefail": {state: NodeFail, slurm: "NODE_FAIL", reason: "NodeDown", exit: -1, ran: true, partition: "long"},
	})
}

// TestParseSqueueControllerDown: squeue exits 0 with the controller down,
// its JSON holding an error and no jobs; that is an error, not an empty
// queue (every job would be lost).
func TestParseSqueueControllerDown(t *testing.T) {
	sts, err := parseSqueue(readFixture(t, "squeue-ctld-down.json"))
	if err == nil || !strings.Contains(err.Error(), "slurm_load_jobs") {
		t.Fatalf("got %v, %v; want the error squeue reported", sts, err)
	}
}

func TestParseSacct(t *testing.T) {
	sts, err := parseSacct(readFixture(t, "sacct.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := byName(t, sts)
	for _, st := range m {
		if !st.FromAccounting {
			t.Errorf("%s: not marked as from accounting", st.Name)
		}
	}
	// sacct gives no reasons, and exit codes only of signals and of
	// COMPLETED jobs (see sacctExit).
	check(t, m, fixtureNode, map[string]want{
		"ok":        {state: Completed, slurm: "COMPLETED", exit: 0, ran: true},
		"fail":      {state: Failed, slurm: "FAILED", exit: -1, ran: true},
		"oom":       {state: OutOfMemory, slurm: "OUT_OF_MEMORY", exit: -1, ran: true},
		"timeout":   {state: Timeout, slurm: "TIMEOUT", exit: -1, ran: true},
		"cancelled": {state: Cancelled, slurm: "CANCELLED", exit: -1, ran: true},
	})
	// MaxRSS is the batch step's tres.requested.max "mem", in bytes (3620864
	// is 3536K as sacct prints MaxRSS); Elapsed is time.elapsed.
	for name, w := range map[string]struct {
		rss     int64
		elapsed time.Duration
	}{
		"ok":      {3620864, time.Second},
		"fail":    {1105920, 0},
		"oom":     {3379200, 4 * time.Second},
		"timeout": {3334144, 87 * time.Second},
	} {
		if st := m[name]; st.MaxRSS != w.rss || st.Elapsed != w.elapsed {
			t.Errorf("%s: MaxRSS %d, Elapsed %v; want %d, %v", name, st.MaxRSS, st.Elapsed, w.rss, w.elapsed)
		}
	}
}

func TestParseSacctNodeFail(t *testing.T) {
	sts, err := parseSacct(readFixture(t, "sacct-nodefail.json"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, byName(t, sts), fixtureNode, map[string]want{
		"nodefail": {state: NodeFail, slurm: "NODE_FAIL", exit: -1, ran: true, partition: "long"},
	})
	if st := sts[0]; st.MaxRSS != 0 || st.Elapsed != 88*time.Second {
		t.Errorf("MaxRSS %d, Elapsed %v; want 0 (its step recorded no usage), 88s", st.MaxRSS, st.Elapsed)
	}
}

func TestParseSacctNothingFound(t *testing.T) {
	// sacct's answer for job ids it has no record of (recorded likewise).
	out := `{"meta": {}, "errors": [{"description": "Nothing found", "error_number": 9003,
		"error": "Nothing found with query", "source": "slurmdb_jobs_get"}], "jobs": []}`
	sts, err := parseSacct([]byte(out))
	if err != nil || len(sts) != 0 {
		t.Fatalf("got %v, %v; want no jobs and no error", sts, err)
	}
}

func TestParseBadOutput(t *testing.T) {
	for _, out := range []string{"", "{", `{"jobs": [{"job_id": "x"}]}`} {
		if _, err := parseSqueue([]byte(out)); err == nil {
			t.Errorf("parseSqueue(%q) accepted", out)
		}
		if _, err := parseSacct([]byte(out)); err == nil {
			t.Errorf("parseSacct(%q) accepted", out)
		}
	}
}

func TestStateOf(t *testing.T) {
	tests := []struct {
		slurm   string
		started bool
		want    State
	}{
		{"PENDING", false, Pending},
		{"REQUEUED", true, Pending},
		{"COMPLETING", true, Running},
		{"SUSPENDED", true, Running},
		{"PREEMPTED", true, Failed},
		{"BOOT_FAIL", false, NodeFail},
		{"DEADLINE", false, Timeout},
		{"SOMETHING_NEW", true, Running},
		{"SOMETHING_NEW", false, Pending},
	}
	for _, tt := range tests {
		if got := stateOf(tt.slurm, tt.started); got != tt.want {
			t.Errorf("stateOf(%q, %v) = %s, want %s", tt.slurm, tt.started, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		st   Status
		want string
	}{
		{Status{ID: 1, State: Failed, SlurmState: "FAILED", Reason: "NonZeroExitCode", ExitCode: 3, Node: "n1"},
			"FAILED: NonZeroExitCode, exit 3 on n1"},
		{Status{ID: 2, State: Timeout, SlurmState: "TIMEOUT", Reason: "TimeLimit", ExitCode: -1, Signal: 15, Node: "n1"},
			"TIMEOUT: TimeLimit, killed by signal 15 on n1"},
		{Status{ID: 3, State: Failed, SlurmState: "PREEMPTED", ExitCode: -1}, "FAILED (PREEMPTED)"},
		{Status{ID: 4, State: Lost, ExitCode: -1}, "job 4 is not known to Slurm any more"},
	}
	for _, tt := range tests {
		if got := tt.st.Describe(); got != tt.want {
			t.Errorf("Describe() = %q, want %q", got, tt.want)
		}
	}
}
