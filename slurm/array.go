package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ArrayJob is one job array: several programs submitted with one sbatch
// call (--array), one task each, which Slurm queues, runs, polls and
// cancels task by task. Every task shares the array's name, options and
// environment; each runs its own command in its own directory, its
// output in its own log.
type ArrayJob struct {
	Name string // job name of every task, as squeue shows it
	// Dir is where the script and each task's log link are written, and
	// the tasks' starting directory (absolute).
	Dir   string
	Env   []string
	Tasks []Task
	Options
	Hold bool // submit held, as Job.Hold
}

// Task is one task of an ArrayJob.
type Task struct {
	// Index is the task's SLURM_ARRAY_TASK_ID, its index in squeue's
	// "1234_5"; distinct within the array, at least 0.
	Index   int
	Dir     string   // working directory (absolute)
	Log     string   // file receiving its stdout and stderr (absolute)
	Command []string // the program and its arguments
}

// TaskLog is the name, in an ArrayJob's Dir, of the link to the log of
// task i: Slurm opens each task's output as Dir/task-%a.log (sbatch
// --output names one pattern for every task), which leads to the task's
// own Log, so Slurm's messages about a task land in the task's log as a
// job's do in its.
func TaskLog(i int) string { return "task-" + strconv.Itoa(i) + ".log" }

// Script returns the batch script of the array: the #SBATCH lines of its
// options and of --array, the exported environment, then a case on
// SLURM_ARRAY_TASK_ID that enters each task's directory and execs its
// command (so the task's process is its program, as a job's is).
func (a ArrayJob) Script() (string, error) {
	if err := a.validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	opt := func(name, value string) { fmt.Fprintf(&b, "#SBATCH --%s=%s\n", name, value) }
	opt("job-name", sbatchValue(a.Name))
	opt("chdir", sbatchValue(a.Dir))
	opt("output", sbatchValue(filepath.Join(strings.ReplaceAll(a.Dir, "%", "%%"), "task-%a.log")))
	idx := make([]int, len(a.Tasks))
	for i, t := range a.Tasks {
		idx[i] = t.Index
	}
	opt("array", FormatTasks(idx))
	writeOptions(&b, a.Options)
	b.WriteString("# Written by Cascade: a job array, one task per run; sbatch it again to rerun them by hand.\n")
	writeEnv(&b, a.Env)
	b.WriteString("case \"$SLURM_ARRAY_TASK_ID\" in\n")
	for _, t := range a.Tasks {
		fmt.Fprintf(&b, "%d) cd %s && exec %s ;;\n", t.Index, shellQuote(t.Dir), shellCommand(t.Command))
	}
	b.WriteString("*) echo \"cascade: this array has no task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n")
	return b.String(), nil
}

// validate names the first field or task that cannot go into a script.
func (a ArrayJob) validate() error {
	if len(a.Tasks) == 0 {
		return errors.New("slurm job array: no tasks")
	}
	if !filepath.IsAbs(a.Dir) || strings.ContainsAny(a.Dir, "\"\\\n\r") {
		return fmt.Errorf("slurm job array: dir: %q is not an absolute path an #SBATCH line can carry", a.Dir)
	}
	seen := map[int]bool{}
	for _, t := range a.Tasks {
		if t.Index < 0 || seen[t.Index] {
			return fmt.Errorf("slurm job array: task %d: an index is at least 0 and given once", t.Index)
		}
		seen[t.Index] = true
		j := Job{Name: a.Name, Dir: t.Dir, Log: t.Log, Command: t.Command, Env: a.Env, Options: a.Options}
		if err := j.validate(); err != nil {
			return fmt.Errorf("task %d: %w", t.Index, err)
		}
	}
	return nil
}

// WriteScript writes the array's script to Dir/job.sbatch and, for each
// task, the link Dir/task-<index>.log to its log (see TaskLog), and
// returns the script's path.
func (a ArrayJob) WriteScript() (string, error) {
	s, err := a.Script()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return "", fmt.Errorf("job array directory: %w", err)
	}
	for _, t := range a.Tasks {
		link := filepath.Join(a.Dir, TaskLog(t.Index))
		if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("task log link: %w", err)
		}
		if err := os.Symlink(t.Log, link); err != nil {
			return "", fmt.Errorf("task log link: %w", err)
		}
	}
	path := filepath.Join(a.Dir, ScriptName)
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		return "", fmt.Errorf("write job array script: %w", err)
	}
	return path, nil
}

// DefaultMaxArraySize is Slurm's MaxArraySize when slurm.conf sets none:
// an array's task indices are below it.
const DefaultMaxArraySize = 1001

// MaxArraySize is the controller's MaxArraySize (scontrol show config,
// asked once): the indices of an array's tasks must be below it, or
// sbatch refuses the array.
func (c *Client) MaxArraySize(ctx context.Context) (int, error) {
	cfg, err := c.controllerConfig(ctx)
	if err != nil {
		return 0, err
	}
	return maxArraySize(cfg), nil
}

func maxArraySize(cfg map[string]string) int {
	if n, err := strconv.Atoi(cfg["MaxArraySize"]); err == nil && n > 0 {
		return n
	}
	return DefaultMaxArraySize
}

// SubmitArray writes the array's script and submits it with one sbatch
// --parsable call, and returns the array's job id: task i is then
// TaskRef(id, i). Errors are Submit's.
func (c *Client) SubmitArray(ctx context.Context, a ArrayJob) (JobID, error) {
	script, err := a.WriteScript()
	if err != nil {
		return 0, err
	}
	return c.sbatch(ctx, script, a.Hold)
}
