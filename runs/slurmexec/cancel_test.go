package slurmexec

import (
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/slurm"
)

// TestWholeArrays: the tasks of a job array are cancelled with one ref of
// the array when they are all it still runs for Cascade (those cancelled
// before count as gone), one by one otherwise; plain jobs stay as given.
func TestWholeArrays(t *testing.T) {
	e := New(nil, Config{})
	follow := func(run string, ref slurm.Ref, cancelled bool) {
		e.jobs[run] = &job{runID: run, ref: ref, cancelled: cancelled}
	}
	follow("a0", slurm.TaskRef(10, 0), false)
	follow("a1", slurm.TaskRef(10, 1), true) // cancelled by an earlier call
	follow("a2", slurm.TaskRef(10, 2), false)
	follow("b0", slurm.TaskRef(20, 0), false)
	follow("b3", slurm.TaskRef(20, 3), false)
	follow("p", slurm.JobRef(30), false)
	for _, tt := range []struct {
		in, want []slurm.Ref
	}{
		{[]slurm.Ref{slurm.TaskRef(10, 0), slurm.TaskRef(10, 2)}, []slurm.Ref{slurm.JobRef(10)}},
		{[]slurm.Ref{slurm.TaskRef(10, 0)}, []slurm.Ref{slurm.TaskRef(10, 0)}},
		{[]slurm.Ref{slurm.TaskRef(20, 3)}, []slurm.Ref{slurm.TaskRef(20, 3)}},
		{[]slurm.Ref{slurm.TaskRef(20, 3), slurm.JobRef(30), slurm.TaskRef(20, 0)}, []slurm.Ref{slurm.JobRef(20), slurm.JobRef(30)}},
	} {
		e.mu.Lock()
		got := e.wholeArraysLocked(tt.in)
		e.mu.Unlock()
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v: %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestRefOf: a stored run's job is a job, or a task of the array JobID.
func TestRefOf(t *testing.T) {
	id, task := int64(812), 3
	if got := refOf(cascade.SlurmJob{JobID: &id}); got != slurm.JobRef(812) {
		t.Errorf("job: %v", got)
	}
	s := cascade.SlurmJob{JobID: &id, ArrayTaskID: &task}
	if got := refOf(s); got != slurm.TaskRef(812, 3) || s.Ref() != "812_3" {
		t.Errorf("task: %v, %q", got, s.Ref())
	}
}
