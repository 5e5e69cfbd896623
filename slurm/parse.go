package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The structs below hold only the fields Cascade reads of squeue --json and
// sacct --json (OpenAPI v0.0.38, Slurm 22.05); encoding/json skips the
// rest, which is most of each job.

// apiErrors is the "errors" list both commands print beside their jobs.
type apiErrors []struct {
	Description string `json:"description"`
	Number      int    `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

// errNothingFound is sacct's error_number for a query that matched no job:
// an empty answer, not a failure.
const errNothingFound = 9003

func (es apiErrors) err(skip int) error {
	var msgs []string
	for _, e := range es {
		if e.Number == skip {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%s: %s (%s)", e.Source, e.Description, e.Error))
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// jsonError says where output that does not read as JSON of the expected
// shape broke: encoding/json's messages name the field at best, never the
// byte.
func jsonError(cmd string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("read %s: at byte %d: %w", cmd, se.Offset, err)
	case errors.As(err, &te):
		return fmt.Errorf("read %s: at byte %d: %w", cmd, te.Offset, err)
	}
	return fmt.Errorf("read %s: %w", cmd, err)
}

type squeueOutput struct {
	Errors apiErrors   `json:"errors"`
	Jobs   []squeueJob `json:"jobs"`
}

type squeueJob struct {
	ID        JobID  `json:"job_id"`
	Array     JobID  `json:"array_job_id"`
	Task      *int   `json:"array_task_id"`
	Tasks     string `json:"array_task_string"` // a pending array's tasks: "0,2-3"
	Name      string `json:"name"`
	State     string `json:"job_state"`
	Reason    string `json:"state_reason"`
	Nodes     string `json:"nodes"`
	Partition string `json:"partition"`
	ExitCode  int    `json:"exit_code"` // a wait(2) status
	Start     int64  `json:"start_time"`
	End       int64  `json:"end_time"`
}

// parseSqueue reads squeue --json. An error Slurm reports in the output
// (squeue exits 0 when it cannot reach the controller) is returned.
func parseSqueue(data []byte) ([]Status, error) {
	var out squeueOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, jsonError("squeue --json", err)
	}
	if err := out.Errors.err(0); err != nil {
		return nil, err
	}
	sts := make([]Status, 0, len(out.Jobs))
	for _, j := range out.Jobs {
		st := Status{
			ID:         j.ID,
			Array:      j.Array,
			Task:       NoTask,
			SlurmState: j.State,
			State:      stateOf(j.State, j.Start > 0),
			Reason:     reason(j.Reason),
			Name:       j.Name,
			Node:       j.Nodes,
			Partition:  j.Partition,
			ExitCode:   -1,
			Start:      unixTime(j.Start),
		}
		if st.State.Done() {
			// Before a job ends squeue's end_time is when its time limit
			// would end it, and exit_code means nothing yet.
			st.End = unixTime(j.End)
			st.ExitCode, st.Signal = waitStatus(j.ExitCode)
			if st.ExitCode == 0 && st.State != Completed {
				st.ExitCode = -1 // a job the node's failure ended never exited
			}
		}
		if st.State == Pending {
			// The nodes and start time a pending job may get: estimates.
			st.Node, st.Start = "", time.Time{}
		}
		sts = appendTasks(sts, st, j.Task, j.Tasks)
	}
	return sts, nil
}

// appendTasks appends st, the status of a job or of a job array's task
// (task, when not nil), or, for the record of an array's tasks that have
// not started (the array's job id, its tasks as list says), one status
// for each of them. A job of no array is appended as it is. A record of
// an array that names no task it could be of (a shape of a later Slurm)
// is left out: the tasks Cascade follows are then asked of sacct, or
// lost, and no other job is held up.
func appendTasks(sts []Status, st Status, task *int, list string) []Status {
	switch {
	case st.Array == 0:
		st.Task = NoTask
		return append(sts, st)
	case task != nil && *task >= 0 && *task < maxTasks:
		st.Task = *task
		return append(sts, st)
	}
	ts, err := ParseTasks(list)
	if err != nil {
		return sts
	}
	for _, t := range ts {
		st.Task = t
		sts = append(sts, st)
	}
	return sts
}

type sacctOutput struct {
	Errors apiErrors  `json:"errors"`
	Jobs   []sacctJob `json:"jobs"`
}

type sacctJob struct {
	ID    JobID `json:"job_id"`
	Array struct {
		ID   JobID   `json:"job_id"`
		Task *int    `json:"task_id"`
		List *string `json:"task"` // the tasks not started: a bitmap, "0xD"
	} `json:"array"`
	Name  string `json:"name"`
	State struct {
		Current string `json:"current"`
		Reason  string `json:"reason"`
	} `json:"state"`
	Nodes     string `json:"nodes"`
	Partition string `json:"partition"`
	ExitCode  struct {
		Status     string `json:"status"` // SUCCESS, FAILED, SIGNALED
		ReturnCode *int   `json:"return_code"`
		Signal     struct {
			ID *int `json:"signal_id"`
		} `json:"signal"`
	} `json:"exit_code"`
	Time struct {
		Elapsed int64 `json:"elapsed"` // seconds
		Start   int64 `json:"start"`
		End     int64 `json:"end"`
	} `json:"time"`
	Steps []struct {
		TRES struct {
			Requested struct {
				Max []sacctTRES `json:"max"`
			} `json:"requested"`
		} `json:"tres"`
	} `json:"steps"`
}

// sacctTRES is one trackable resource's figure: of type "mem", bytes.
type sacctTRES struct {
	Type  string `json:"type"`
	Count *int64 `json:"count"`
}

// maxRSS is the job's MaxRSS in bytes: the largest of its steps' peak
// resident memory (the "mem" of each step's tres.requested.max, which sacct
// prints as MaxRSS); 0 when no step recorded one.
func (j sacctJob) maxRSS() int64 {
	var rss int64
	for _, s := range j.Steps {
		for _, t := range s.TRES.Requested.Max {
			if t.Type == "mem" && t.Count != nil {
				rss = max(rss, *t.Count)
			}
		}
	}
	return rss
}

// sacctExit reads sacct's exit code. Slurm 22.05's sacct --json writes
// status SUCCESS, return code 0 for every job that exited, whatever its code
// (a FAILED job's exit 3 included; see testdata/sacct.json, where the text
// output says 3:0), so a 0 is believed of COMPLETED jobs only and is
// unknown (-1) otherwise. Signals are right, but for the out-of-memory
// "signal 125", which is no signal; a return code outside 0…255 is
// no exit status either, and unknown.
func sacctExit(s State, j sacctJob) (exit, signal int) {
	e := j.ExitCode
	switch {
	case e.Signal.ID != nil && *e.Signal.ID > 0 && *e.Signal.ID <= 64:
		return -1, *e.Signal.ID
	case e.ReturnCode != nil && *e.ReturnCode >= 0 && *e.ReturnCode <= 255 && (*e.ReturnCode != 0 || s == Completed):
		return *e.ReturnCode, 0
	}
	return -1, 0
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// parseSacct reads sacct --json. "Nothing found" is no jobs, not an error.
// A job recorded more than once (requeued) counts by its last record.
func parseSacct(data []byte) ([]Status, error) {
	var out sacctOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, jsonError("sacct --json", err)
	}
	if err := out.Errors.err(errNothingFound); err != nil {
		return nil, err
	}
	sts := make([]Status, 0, len(out.Jobs))
	at := map[Ref]int{}
	for _, j := range out.Jobs {
		st := Status{
			ID:             j.ID,
			Array:          j.Array.ID,
			Task:           NoTask,
			SlurmState:     j.State.Current,
			State:          stateOf(j.State.Current, j.Time.Start > 0),
			Reason:         reason(j.State.Reason),
			Name:           j.Name,
			Node:           j.Nodes,
			Partition:      j.Partition,
			ExitCode:       -1,
			Start:          unixTime(j.Time.Start),
			FromAccounting: true,
		}
		if st.State == Pending || st.Node == "None assigned" {
			st.Node, st.Start = "", time.Time{}
		}
		if st.State.Done() {
			st.End = unixTime(j.Time.End)
			st.ExitCode, st.Signal = sacctExit(st.State, j)
			st.Elapsed = time.Duration(max(0, j.Time.Elapsed)) * time.Second
			st.MaxRSS = j.maxRSS()
		}
		for _, st := range appendTasks(nil, st, j.Array.Task, deref(j.Array.List)) {
			if i, ok := at[st.Ref()]; ok {
				sts[i] = st
				continue
			}
			at[st.Ref()] = len(sts)
			sts = append(sts, st)
		}
	}
	return sts, nil
}
