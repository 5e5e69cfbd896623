package slurm

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testdata/squeue-array.json and sacct-array.json are real outputs of
// Slurm 22.05 on scripts/slurm.sh's cluster, of: job array 5 ("array-done",
// tasks 0-1, both completed), 6 ("array-held", --array=0,2-3 --hold, one
// pending record), 9 ("array-throttled", --array=0-4%2: tasks 0 and 1
// running, 2-4 pending as one record), and job 7 ("plain", running).

func TestParseRefs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []Ref
	}{
		{"1234", []Ref{JobRef(1234)}},
		{"1234;cluster", []Ref{JobRef(1234)}},
		{"1234_5", []Ref{TaskRef(1234, 5)}},
		{"1234_0", []Ref{TaskRef(1234, 0)}},
		{"1234_[0-3]", []Ref{TaskRef(1234, 0), TaskRef(1234, 1), TaskRef(1234, 2), TaskRef(1234, 3)}},
		{"9_[2-4%2]", []Ref{TaskRef(9, 2), TaskRef(9, 3), TaskRef(9, 4)}},
		{"6_[0,2-3]", []Ref{TaskRef(6, 0), TaskRef(6, 2), TaskRef(6, 3)}},
		{"6_[0-8:4]", []Ref{TaskRef(6, 0), TaskRef(6, 4), TaskRef(6, 8)}},
		{"6_[3,1,3]", []Ref{TaskRef(6, 1), TaskRef(6, 3)}},
	} {
		got, err := ParseRefs(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseRefs(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "x", "0", "-3", "12_", "12_x", "12_-1", "12_[", "12_[0-3", "12_[]", "12_[3-1]", "12_[1-]", "12_[0-4:0]", "x_1", "12_[99999999]"} {
		if got, err := ParseRefs(bad); err == nil {
			t.Errorf("ParseRefs(%q) = %v, want an error", bad, got)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseRefs(%q): error %q does not name the id", bad, err)
		}
	}
}

func TestRefString(t *testing.T) {
	for _, tt := range []struct {
		r    Ref
		want string
	}{{JobRef(42), "42"}, {TaskRef(42, 0), "42_0"}, {TaskRef(42, 17), "42_17"}} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
		if back, err := ParseRefs(tt.r.String()); err != nil || len(back) != 1 || back[0] != tt.r {
			t.Errorf("ParseRefs(%q) = %v, %v", tt.r, back, err)
		}
	}
	if JobRef(7).IsTask() || !TaskRef(7, 0).IsTask() {
		t.Error("IsTask")
	}
}

func TestParseTasksBitmap(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
	}{
		{"0xD", []int{0, 2, 3}},
		{"0x1C", []int{2, 3, 4}},
		{"0x1", []int{0}},
		{"0x0", nil},
		{"0x100000000", []int{32}},
	} {
		got, err := ParseTasks(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseTasks(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseTasks("0xZZ"); err == nil {
		t.Error("ParseTasks(0xZZ): no error")
	}
}

func TestFormatTasks(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{5, 0, 2, 3, 3}, "0,2-3,5"},
		{[]int{1, 3, 5}, "1,3,5"},
	} {
		if got := FormatTasks(tt.in); got != tt.want {
			t.Errorf("FormatTasks(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var ts []int
		for i := range 40 {
			if r.IntN(3) > 0 {
				ts = append(ts, i)
			}
		}
		if len(ts) == 0 {
			continue
		}
		back, err := ParseTasks(FormatTasks(ts))
		if err != nil || !slices.Equal(back, ts) {
			t.Fatalf("%v formatted %q read back as %v, %v", ts, FormatTasks(ts), back, err)
		}
	}
}

// checkArrayStatuses checks the statuses read of the array fixtures.
func checkArrayStatuses(t *testing.T, sts []Status, fromSacct bool) {
	t.Helper()
	got := map[Ref]Status{}
	for _, st := range sts {
		if _, dup := got[st.Ref()]; dup {
			t.Errorf("%s twice", st.Ref())
		}
		got[st.Ref()] = st
	}
	want := map[Ref]State{
		JobRef(7):     Running,
		TaskRef(5, 0): Completed, TaskRef(5, 1): Completed,
		TaskRef(6, 0): Pending, TaskRef(6, 2): Pending, TaskRef(6, 3): Pending,
		TaskRef(9, 0): Running, TaskRef(9, 1): Running,
		TaskRef(9, 2): Pending, TaskRef(9, 3): Pending, TaskRef(9, 4): Pending,
	}
	for r, s := range want {
		st, ok := got[r]
		if !ok {
			t.Errorf("%s: not read", r)
			continue
		}
		if st.State != s {
			t.Errorf("%s: %s, want %s", r, st.State, s)
		}
		if r.IsTask() && (st.Array != r.ID || st.Task != r.Task) {
			t.Errorf("%s: array %d task %d", r, st.Array, st.Task)
		}
	}
	for r := range got {
		if _, ok := want[r]; !ok {
			t.Errorf("%s read, which is no job or task of the fixture", r)
		}
	}
	// A running task has an id of its own; the pending ones share the
	// array's record.
	if st := got[TaskRef(9, 0)]; st.ID == 9 || st.Node == "" {
		t.Errorf("running task 9_0: %+v, want an id of its own and a node", st)
	}
	if st := got[TaskRef(9, 3)]; st.ID != 9 || st.Node != "" {
		t.Errorf("pending task 9_3: %+v, want the array's id and no node", st)
	}
	if !fromSacct {
		if st := got[TaskRef(6, 2)]; st.Reason != "JobHeldUser" {
			t.Errorf("held task 6_2: reason %q", st.Reason)
		}
		if st := got[TaskRef(9, 4)]; st.Reason != "JobArrayTaskLimit" {
			t.Errorf("throttled task 9_4: reason %q", st.Reason)
		}
	}
}

func TestParseSqueueArray(t *testing.T) {
	sts, err := parseSqueue(readFixture(t, "squeue-array.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkArrayStatuses(t, sts, false)
}

func TestParseSacctArray(t *testing.T) {
	sts, err := parseSacct(readFixture(t, "sacct-array.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkArrayStatuses(t, sts, true)
	for _, st := range sts {
		if !st.FromAccounting {
			t.Errorf("%s: not from accounting", st.Ref())
		}
	}
}

// An array's record whose task list does not read is left out; the
// other jobs are read.
func TestParseSqueueArrayUnreadableTasks(t *testing.T) {
	data := strings.Replace(string(readFixture(t, "squeue-array.json")), `"2-4%2"`, `"2-x"`, 1)
	sts, err := parseSqueue([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.Array == 9 && st.Task >= 2 {
			t.Errorf("read %s of an unreadable task list", st.Ref())
		}
	}
	if len(sts) != 8 {
		t.Errorf("%d statuses, want the 8 others", len(sts))
	}
}

func arrayJob(t *testing.T) ArrayJob {
	dir := filepath.Join(t.TempDir(), "array dir")
	a := ArrayJob{Name: "cascade-parent", Dir: dir, Env: []string{"A=b c"}, Options: Options{Partition: "debug", MemoryMB: 512}}
	for _, i := range []int{0, 2, 3} {
		d := filepath.Join(t.TempDir(), "seg")
		a.Tasks = append(a.Tasks, Task{Index: i, Dir: d, Log: filepath.Join(d, "sim.log"), Command: []string{"sim", "-trace", "it's"}})
	}
	return a
}

func TestArrayScript(t *testing.T) {
	a := arrayJob(t)
	path, err := a.WriteScript()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{
		"#SBATCH --array=0,2-3\n",
		"#SBATCH --job-name=cascade-parent\n",
		`#SBATCH --output="` + a.Dir + `/task-%a.log"` + "\n",
		"#SBATCH --partition=debug\n",
		"#SBATCH --mem=512M\n",
		"export A='b c'\n",
		"case \"$SLURM_ARRAY_TASK_ID\" in\n",
		"2) cd '" + a.Tasks[1].Dir + "' && exec 'sim' '-trace' 'it'\\''s' ;;\n",
		"*) echo",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	for _, task := range a.Tasks {
		link := filepath.Join(a.Dir, TaskLog(task.Index))
		if to, err := os.Readlink(link); err != nil || to != task.Log {
			t.Errorf("%s -> %q, %v; want -> %s", link, to, err, task.Log)
		}
	}
	// Written again (the array of the segments left), the links are
	// replaced.
	a.Tasks = a.Tasks[1:]
	if _, err := a.WriteScript(); err != nil {
		t.Fatal(err)
	}
}

func TestArrayScriptInvalid(t *testing.T) {
	for name, change := range map[string]func(a *ArrayJob){
		"no tasks":      func(a *ArrayJob) { a.Tasks = nil },
		"same index":    func(a *ArrayJob) { a.Tasks[1].Index = 0 },
		"negative":      func(a *ArrayJob) { a.Tasks[0].Index = -1 },
		"relative dir":  func(a *ArrayJob) { a.Dir = "rel" },
		"relative log":  func(a *ArrayJob) { a.Tasks[2].Log = "sim.log" },
		"empty command": func(a *ArrayJob) { a.Tasks[1].Command = nil },
		"bad env":       func(a *ArrayJob) { a.Env = []string{"1x=y"} },
	} {
		a := arrayJob(t)
		change(&a)
		if _, err := a.Script(); err == nil {
			t.Errorf("%s: no error", name)
		} else if errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMaxArraySize(t *testing.T) {
	cfg := parseConfig([]byte("Configuration data as of 2026-12-05T22:40:01\nAccountingStorageType   = accounting_storage/slurmdbd\nMaxArraySize            = 20001\nMaxJobCount             = 20000\n"))
	if got := maxArraySize(cfg); got != 20001 {
		t.Errorf("MaxArraySize %d, want 20001", got)
	}
	if cfg["AccountingStorageType"] != "accounting_storage/slurmdbd" {
		t.Errorf("config %v", cfg)
	}
	if got := maxArraySize(parseConfig([]byte("MaxJobCount = 10\n"))); got != DefaultMaxArraySize {
		t.Errorf("without MaxArraySize: %d", got)
	}
}
