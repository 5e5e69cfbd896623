package slurm

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// NoTask is the Task of a Ref to a job that is no job array's task.
const NoTask = -1

// Ref names what Slurm's commands take as a job: a job ("1234"), or one
// task of a job array ("1234_5": ID the array's job id, Task the task's
// index, SLURM_ARRAY_TASK_ID). A Ref to a whole array is JobRef of its
// id: scancel cancels every task then.
type Ref struct {
	ID   JobID
	Task int // NoTask for a job that is no array's task
}

// JobRef is the Ref of a job, or of a whole job array.
func JobRef(id JobID) Ref { return Ref{ID: id, Task: NoTask} }

// TaskRef is the Ref of one task of a job array.
func TaskRef(array JobID, task int) Ref { return Ref{ID: array, Task: task} }

// IsTask reports whether r is a job array's task.
func (r Ref) IsTask() bool { return r.Task >= 0 }

// String is the ref as squeue prints it and scancel and sacct take it:
// "1234", or "1234_5".
func (r Ref) String() string {
	if r.IsTask() {
		return r.ID.String() + "_" + strconv.Itoa(r.Task)
	}
	return r.ID.String()
}

// Compare orders refs by job id, then task (a job before its tasks).
func (r Ref) Compare(o Ref) int {
	if r.ID != o.ID {
		return cmp.Compare(r.ID, o.ID)
	}
	return cmp.Compare(r.Task, o.Task)
}

// ParseRefs reads a job id as squeue and sacct print it: "1234" (a job),
// "1234_5" (one task of an array), or "1234_[0,2-5%2]" (the pending
// tasks of an array, listed as --array takes them, the "%" throttle
// ignored), and returns one Ref for each job or task it names.
func ParseRefs(s string) ([]Ref, error) {
	id, tasks, isArray := strings.Cut(s, "_")
	jid, err := ParseJobID(id)
	if err != nil {
		return nil, fmt.Errorf("slurm: not a job id: %q", s)
	}
	if !isArray {
		return []Ref{JobRef(jid)}, nil
	}
	if rest, ok := strings.CutPrefix(tasks, "["); ok {
		list, ok := strings.CutSuffix(rest, "]")
		if !ok {
			return nil, fmt.Errorf("slurm: job id %q: task list without its closing \"]\"", s)
		}
		ts, err := ParseTasks(list)
		if err != nil {
			return nil, fmt.Errorf("slurm: job id %q: %w", s, err)
		}
		refs := make([]Ref, len(ts))
		for i, t := range ts {
			refs[i] = TaskRef(jid, t)
		}
		return refs, nil
	}
	t, err := strconv.Atoi(tasks)
	if err != nil || t < 0 {
		return nil, fmt.Errorf("slurm: job id %q: task %q is not a task index", s, tasks)
	}
	return []Ref{TaskRef(jid, t)}, nil
}

// maxTasks bounds the tasks one array's task list may name: Slurm's own
// MaxArraySize is at most 4,000,001.
const maxTasks = 4_000_001

// ParseTasks reads an array's task indices in either form Slurm prints
// them: squeue's list of indices and ranges, as --array takes them
// ("0,2-5", "0-15:4" with a step, "0-9%2" with a throttle, which is
// ignored), or sacct --json's hexadecimal bitmap ("0xD": tasks 0, 2 and
// 3). The indices are returned in increasing order, each once.
func ParseTasks(s string) ([]int, error) {
	if hex, ok := strings.CutPrefix(s, "0x"); ok {
		var n big.Int
		if _, ok := n.SetString(hex, 16); !ok {
			return nil, fmt.Errorf("task bitmap %q is not hexadecimal", s)
		}
		if n.BitLen() > maxTasks {
			return nil, fmt.Errorf("task bitmap %q: more than %d tasks", s, maxTasks)
		}
		var ts []int
		for i := range n.BitLen() {
			if n.Bit(i) == 1 {
				ts = append(ts, i)
			}
		}
		return ts, nil
	}
	list, _, _ := strings.Cut(s, "%")
	if list == "" {
		return nil, fmt.Errorf("task list %q is empty", s)
	}
	seen := map[int]bool{}
	for part := range strings.SplitSeq(list, ",") {
		rng, stepS, hasStep := strings.Cut(part, ":")
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, err := strconv.Atoi(loS)
		hi := lo
		if err == nil && isRange {
			hi, err = strconv.Atoi(hiS)
		}
		step := 1
		if err == nil && hasStep {
			step, err = strconv.Atoi(stepS)
		}
		switch {
		case err != nil || lo < 0 || step < 1:
			return nil, fmt.Errorf("task list %q: %q is not an index, a range lo-hi, or lo-hi:step", s, part)
		case hi < lo:
			return nil, fmt.Errorf("task list %q: range %q ends before it begins", s, part)
		case hi >= maxTasks:
			return nil, fmt.Errorf("task list %q: index %d beyond Slurm's largest array", s, hi)
		}
		for t := lo; t <= hi; t += step {
			seen[t] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// FormatTasks writes task indices as --array takes them: increasing,
// consecutive ones as ranges ("0,2-5").
func FormatTasks(ts []int) string {
	ts = slices.Compact(slices.Sorted(slices.Values(ts)))
	var b strings.Builder
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && ts[j+1] == ts[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ts[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ts[j]))
		}
		i = j + 1
	}
	return b.String()
}
