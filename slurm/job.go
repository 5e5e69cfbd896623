package slurm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ScriptName is the file a job's script is written to, in its directory.
const ScriptName = "job.sbatch"

// Job is one batch job: a program run once in a directory the cluster's
// nodes share, its output in a log file.
type Job struct {
	Name    string   // job name, as squeue shows it
	Dir     string   // working directory; the script is written here (absolute)
	Log     string   // file receiving the program's stdout and stderr (absolute)
	Command []string // the program and its arguments
	// Env is added to the environment the job inherits from the submitter
	// (sbatch's default, --export=ALL), as KEY=VALUE.
	Env []string

	// Options are the job's resources and placement; zero values leave
	// Slurm's defaults. The time limit is rounded up to whole minutes,
	// Slurm's unit.
	Options
	// Hold submits the job held (sbatch --hold): it stays pending, reason
	// JobHeldUser, until released or cancelled.
	Hold bool
}

// Script returns the batch script for j: #SBATCH lines for every option set,
// then the exported environment and an exec of the command, so the job's
// process is the program itself and Slurm's signals reach it directly.
func (j Job) Script() (string, error) {
	if err := j.validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	opt := func(name, value string) { fmt.Fprintf(&b, "#SBATCH --%s=%s\n", name, value) }
	opt("job-name", sbatchValue(j.Name))
	opt("chdir", sbatchValue(j.Dir))
	// One log for both streams, as the local executor keeps; "%" would be a
	// filename pattern (%j, %N) to Slurm.
	opt("output", sbatchValue(strings.ReplaceAll(j.Log, "%", "%%")))
	writeOptions(&b, j.Options)
	b.WriteString("# Written by Cascade; sbatch it again to rerun the job by hand.\n")
	writeEnv(&b, j.Env)
	b.WriteString("exec " + shellCommand(j.Command) + "\n")
	return b.String(), nil
}

// writeOptions writes the #SBATCH lines of the options set, then the
// placement every Cascade job has.
func writeOptions(b *strings.Builder, o Options) {
	for _, f := range o.set() {
		fmt.Fprintf(b, "#SBATCH --%s=%s\n", f[0], f[1])
	}
	// One task on one node; no requeue, so a node failure ends the job
	// NODE_FAIL (its run fails visibly) rather than restarting it, log
	// truncated, behind the caller's back.
	b.WriteString("#SBATCH --nodes=1 --ntasks=1 --no-requeue\n")
}

// WriteScript writes j's script to Dir/job.sbatch and returns its path.
func (j Job) WriteScript() (string, error) {
	s, err := j.Script()
	if err != nil {
		return "", err
	}
	path := filepath.Join(j.Dir, ScriptName)
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		return "", fmt.Errorf("write job script: %w", err)
	}
	return path, nil
}

// validate names the first field that cannot go into a script.
func (j Job) validate() error {
	if len(j.Command) == 0 || j.Command[0] == "" {
		return errors.New("slurm job: command: empty")
	}
	for _, p := range []struct{ field, path string }{{"dir", j.Dir}, {"log", j.Log}} {
		if !filepath.IsAbs(p.path) {
			return fmt.Errorf("slurm job: %s: %q is not an absolute path (the nodes resolve it, not this process)", p.field, p.path)
		}
	}
	for _, f := range []struct{ field, value string }{{"name", j.Name}, {"dir", j.Dir}, {"log", j.Log}} {
		if strings.ContainsAny(f.value, "\"\\\n\r") {
			return fmt.Errorf("slurm job: %s: %q has a quote, backslash or line break, which an #SBATCH line cannot carry", f.field, f.value)
		}
	}
	for _, f := range []struct{ field, value string }{{"partition", j.Partition}, {"account", j.Account}, {"qos", j.QOS}} {
		if strings.ContainsAny(f.value, " \t\"'\\\n\r") {
			return fmt.Errorf("slurm job: %s: %q is not a Slurm name", f.field, f.value)
		}
	}
	if j.Name == "" {
		return errors.New("slurm job: name: empty")
	}
	if j.TimeLimit < 0 || j.MemoryMB < 0 || j.CPUs < 0 {
		return fmt.Errorf("slurm job: negative time limit (%v), memory (%d MB) or CPUs (%d)", j.TimeLimit, j.MemoryMB, j.CPUs)
	}
	for _, kv := range j.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !isShellName(k) {
			return fmt.Errorf("slurm job: env: %q is not NAME=value", kv)
		}
	}
	return nil
}

// writeEnv writes an export line for each KEY=VALUE of env.
func writeEnv(b *strings.Builder, env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(b, "export %s=%s\n", k, shellQuote(v))
	}
}

// shellCommand is args quoted for sh.
func shellCommand(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// sbatchValue quotes an #SBATCH option value holding blanks: sbatch splits
// those lines at blanks outside double quotes.
func sbatchValue(v string) string {
	if strings.ContainsAny(v, " \t") {
		return `"` + v + `"`
	}
	return v
}

// shellQuote quotes s for sh: in single quotes, each quote in s closed,
// escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isShellName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
