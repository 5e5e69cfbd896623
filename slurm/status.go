package slurm

import (
	"fmt"
	"strconv"
	"time"
)

// JobID is a Slurm job id, as sbatch prints it.
type JobID int64

// String is the id as Slurm's commands take it.
func (id JobID) String() string { return strconv.FormatInt(int64(id), 10) }

// ParseJobID reads a job id, as sbatch --parsable prints it ("42", or
// "42;cluster" on a multi-cluster setup).
func ParseJobID(s string) (JobID, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == ';' {
			s = s[:i]
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("slurm: not a job id: %q", s)
	}
	return JobID(n), nil
}

// State is where a job is, in the few states Cascade tells apart. Slurm's own
// state name is kept in [Status.SlurmState].
type State string

// The states of a job.
const (
	Pending     State = "PENDING"       // waiting for resources, priority, a hold, a requeue
	Running     State = "RUNNING"       // running, completing, suspended, staging out
	Completed   State = "COMPLETED"     // its script exited 0
	Failed      State = "FAILED"        // exited non-zero or was killed (also preempted)
	Timeout     State = "TIMEOUT"       // hit its time limit (also its deadline)
	OutOfMemory State = "OUT_OF_MEMORY" // killed for exceeding its memory
	Cancelled   State = "CANCELLED"     // scancel, by Cascade or an administrator
	NodeFail    State = "NODE_FAIL"     // its node failed (also failed to boot)
	Lost        State = "LOST"          // Slurm knows no such job (any more)
)

// Done reports whether the job has ended: its state will not change again.
func (s State) Done() bool {
	switch s {
	case Pending, Running:
		return false
	}
	return true
}

// Status is what Slurm says of one job at one poll.
type Status struct {
	// ID is the job's own id; a task of a job array has one too once it
	// starts (the array's pending tasks share the array's).
	ID JobID
	// Array is the job id of the array the job is a task of, 0 for none;
	// Task is its index then (see Ref).
	Array JobID
	Task  int
	State State
	// SlurmState is Slurm's state name ("COMPLETING", "PREEMPTED", …);
	// empty for a Lost job.
	SlurmState string
	// Reason is Slurm's reason for the state, "" for none: why a job is
	// pending ("Priority", "Resources", "JobHeldUser"), or why it ended
	// ("NonZeroExitCode", "TimeLimit", "OutOfMemory").
	Reason    string
	Name      string
	Node      string // node list, "" before the job started
	Partition string
	// ExitCode is the script's exit status once it exited, -1 when not
	// known or killed by a signal; Signal the signal that ended it, or 0.
	ExitCode int
	Signal   int
	Start    time.Time // zero until started
	End      time.Time // zero until ended
	// Elapsed is the job's run time as accounting has it, MaxRSS the
	// largest peak resident memory of its steps in bytes (sacct's
	// MaxRSS); both 0 when unknown (squeue's statuses, accounting off, a
	// job whose steps recorded no usage).
	Elapsed time.Duration
	MaxRSS  int64
	// FromAccounting says the status came from sacct: squeue no longer
	// listed the job.
	FromAccounting bool
}

// Ref is what the status is of: the job, or a job array's task.
func (s Status) Ref() Ref {
	if s.Array != 0 && s.Task >= 0 {
		return TaskRef(s.Array, s.Task)
	}
	return JobRef(s.ID)
}

// lost is the status of a job or task Slurm does not know.
func lost(r Ref) Status {
	st := Status{ID: r.ID, State: Lost, ExitCode: -1}
	if r.IsTask() {
		st.Array, st.Task = r.ID, r.Task
	}
	return st
}

// Describe reads as one line for a run's error: "TIMEOUT (TimeLimit) on
// node1", "FAILED: exit 3 on node1", "OUT_OF_MEMORY: killed by signal 9".
func (s Status) Describe() string {
	if s.State == Lost {
		return fmt.Sprintf("job %s is not known to Slurm any more", s.Ref())
	}
	d := string(s.State)
	if s.SlurmState != "" && s.SlurmState != string(s.State) {
		d += " (" + s.SlurmState + ")"
	}
	if s.Reason != "" {
		d += ": " + s.Reason
	}
	switch {
	case s.Signal != 0:
		d += fmt.Sprintf(", killed by signal %d", s.Signal)
	case s.ExitCode > 0:
		d += fmt.Sprintf(", exit %d", s.ExitCode)
	}
	if s.Node != "" {
		d += " on " + s.Node
	}
	return d
}

// stateOf maps Slurm's job state names (squeue's and sacct's, which share
// them) to a State. started says whether the job has a start time: a state
// this package does not know counts as running once started and pending
// before, so no job ends on a name a newer Slurm introduced.
func stateOf(slurm string, started bool) State {
	switch slurm {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT":
		return Pending
	case "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING",
		"STAGE_OUT", "RESIZING":
		return Running
	case "COMPLETED":
		return Completed
	case "FAILED", "PREEMPTED":
		return Failed
	case "TIMEOUT", "DEADLINE":
		return Timeout
	case "OUT_OF_MEMORY":
		return OutOfMemory
	case "CANCELLED", "REVOKED":
		return Cancelled
	case "NODE_FAIL", "BOOT_FAIL":
		return NodeFail
	}
	if started {
		return Running
	}
	return Pending
}

// waitStatus splits squeue's exit_code, a wait(2) status, into an exit code
// and a signal.
func waitStatus(ws int) (exit, signal int) {
	switch sig := ws & 0x7f; {
	case sig == 0:
		return (ws >> 8) & 0xff, 0
	case sig < 0x7f && sig <= 64:
		return -1, sig
	}
	return -1, 0
}

// reason drops Slurm's "None".
func reason(r string) string {
	if r == "None" {
		return ""
	}
	return r
}

// unixTime is a Slurm timestamp: 0 is none.
func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}
