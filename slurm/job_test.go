package slurm_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
)

func TestScript(t *testing.T) {
	j := slurm.Job{
		Name: "cascade-run-7", Dir: "/shared/runs/7 a", Log: "/shared/runs/7 a/sim%.log",
		Command:   []string{"/opt/accel-sim.out", "-trace", "it's here", "-config", "$HOME"},
		Env:       []string{"FAKESIM_MODE=slow", "EMPTY="},
		Partition: "gpu-sim", Account: "arch", QOS: "long", TimeLimit: 61 * time.Second,
		MemoryMB: 4096, CPUs: 2,
	}
	got, err := j.Script()
	if err != nil {
		t.Fatal(err)
	}
	want := `#!/bin/sh
#SBATCH --job-name=cascade-run-7
#SBATCH --chdir="/shared/runs/7 a"
#SBATCH --output="/shared/runs/7 a/sim%%.log"
#SBATCH --partition=gpu-sim
#SBATCH --account=arch
#SBATCH --qos=long
#SBATCH --time=2
#SBATCH --mem=4096M
#SBATCH --cpus-per-task=2
#SBATCH --nodes=1 --ntasks=1 --no-requeue
# Written by Cascade; sbatch it again to rerun the job by hand.
export FAKESIM_MODE='slow'
export EMPTY=''
exec '/opt/accel-sim.out' '-trace' 'it'\''s here' '-config' '$HOME'
`
	if got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
}

// TestScriptRunsTheCommand runs a written script with sh, as slurmstepd
// does: the arguments arrive unchanged, the environment is set.
func TestScriptRunsTheCommand(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	j := slurm.Job{Name: "n", Dir: dir, Log: filepath.Join(dir, "log"),
		Command: []string{"sh", "-c", `printf '%s|' "$@" "$V" >` + out, "sh", "it's", "$HOME", "a  b"},
		Env:     []string{"V=x y"}}
	path, err := j.WriteScript()
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, slurm.ScriptName) {
		t.Errorf("script at %s", path)
	}
	if msg, err := exec.Command("sh", path).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "it's|$HOME|a  b|x y|"; string(got) != want {
		t.Errorf("arguments %q, want %q", got, want)
	}
}

func TestScriptRefuses(t *testing.T) {
	ok := slurm.Job{Name: "n", Dir: "/d", Log: "/d/log", Command: []string{"sim"}}
	tests := []struct {
		name  string
		edit  func(*slurm.Job)
		field string
	}{
		{"no command", func(j *slurm.Job) { j.Command = nil }, "command"},
		{"relative dir", func(j *slurm.Job) { j.Dir = "runs/1" }, "dir"},
		{"relative log", func(j *slurm.Job) { j.Log = "sim.log" }, "log"},
		{"quote in log", func(j *slurm.Job) { j.Log = `/d/"x"` }, "log"},
		{"line break in name", func(j *slurm.Job) { j.Name = "a\nb" }, "name"},
		{"no name", func(j *slurm.Job) { j.Name = "" }, "name"},
		{"blank in partition", func(j *slurm.Job) { j.Partition = "a b" }, "partition"},
		{"quote in account", func(j *slurm.Job) { j.Account = "a'" }, "account"},
		{"negative memory", func(j *slurm.Job) { j.MemoryMB = -1 }, "memory"},
		{"bad env", func(j *slurm.Job) { j.Env = []string{"1X=2"} }, "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := ok
			tt.edit(&j)
			_, err := j.Script()
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("got %v, want an error naming %s", err, tt.field)
			}
		})
	}
	if _, err := ok.Script(); err != nil {
		t.Fatalf("the valid job: %v", err)
	}
}

func TestParseJobID(t *testing.T) {
	for in, want := range map[string]slurm.JobID{"42": 42, "42;cluster": 42} {
		if got, err := slurm.ParseJobID(in); err != nil || got != want {
			t.Errorf("ParseJobID(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "x", "0", "-1", ";c"} {
		if _, err := slurm.ParseJobID(in); err == nil {
			t.Errorf("ParseJobID(%q) accepted", in)
		}
	}
}

// TestSubmitUnfinishedAnswerIsNotARejection: an sbatch whose answer
// cannot be read to its end (here a child keeps its stdout open past the
// client's WaitDelay, as happened under load) while the controller is up
// is ErrUnavailable, not ErrRejected: the job may have been queued, so it
// is looked for by name, not failed as refused.
func TestSubmitUnfinishedAnswerIsNotARejection(t *testing.T) {
	testkit.SkipShort(t, "runs stand-in sbatch and scontrol scripts")
	bin := t.TempDir()
	for name, script := range map[string]string{
		"sbatch":   "#!/bin/sh\necho 42\nsleep 5 &\nexit 0\n",
		"scontrol": "#!/bin/sh\necho 'Slurmctld(primary) at ctl is UP'\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &slurm.Client{Bin: bin}
	dir := t.TempDir()
	_, err := c.Submit(t.Context(), slurm.Job{Name: "cascade-r1", Dir: dir, Log: filepath.Join(dir, "sim.log"), Command: []string{"true"}})
	if !errors.Is(err, slurm.ErrUnavailable) || errors.Is(err, slurm.ErrRejected) {
		t.Fatalf("Submit: %v; want ErrUnavailable, not ErrRejected", err)
	}
}
