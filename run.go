package cascade

import (
	"fmt"
	"time"
)

// RunState is where a simulation run is.
type RunState string

// The states of a run. Succeeded, failed and cancelled are final.
const (
	RunQueued    RunState = "QUEUED"
	RunRunning   RunState = "RUNNING"
	RunSucceeded RunState = "SUCCEEDED"
	RunFailed    RunState = "FAILED"
	RunCancelled RunState = "CANCELLED"
)

// Final reports whether a run in state s is over.
func (s RunState) Final() bool { return s == RunSucceeded || s == RunFailed || s == RunCancelled }

// Run is one Accel-Sim simulation of a ready trace under one config.
type Run struct {
	ID      string `gorm:"primaryKey"`
	Seq     int64  `gorm:"not null;uniqueIndex"`
	TraceID string `gorm:"not null;index"`
	// SimConfig is the config's name: a tested config's ("SM7_QV100") or
	// a variant's ("SM7_QV100-64SM", "SM7_QV100 -gpgpu_n_clusters 40").
	SimConfig string `gorm:"not null"`
	// ConfigBase is, for a variant, the tested config it is made of; ""
	// when SimConfig is a tested config. ConfigParams are the variant's
	// overrides as they were at launch: the run never depends on a
	// modifiers file that changes later.
	ConfigBase   string     `gorm:"not null;default:''"`
	ConfigParams []SimParam `gorm:"serializer:json"`
	// KernelIDs is the chosen subset (kernel ids as in Kernel.KernelID);
	// empty for every kernel. Ids restart in each CUDA context: an id
	// alone selects its launch in every context.
	KernelIDs []int `gorm:"serializer:json"`
	// KernelContexts, when set, is the CUDA context of each of KernelIDs,
	// index for index, and each id selects its launch in that context
	// only: the segments of a sampled or split run of a trace of several
	// contexts. Nil otherwise.
	KernelContexts []string `gorm:"serializer:json"`
	Label          *string
	State          RunState `gorm:"not null;index"`
	Error          *string
	Executor       string `gorm:"not null"`
	// KernelsDone and KernelsTotal are the progress the log shows.
	KernelsDone  int `gorm:"not null"`
	KernelsTotal int `gorm:"not null"`
	// History lists what happened to the run beyond its states, oldest
	// first ("restarted from the beginning: the server restarted").
	History    []string `gorm:"serializer:json"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	// Slurm is the run's batch job when the Slurm executor runs it; its
	// JobID is nil before the job is submitted, and for local runs.
	Slurm SlurmJob `gorm:"embedded;embeddedPrefix:slurm_"`
	// SweepID is the sweep that launched the run; nil for a run launched
	// on its own.
	SweepID *string `gorm:"index"`
	// StatCounters are the simulator statistics each of its kernels
	// carries, in the order of RunKernel.Stats; recorded when the run
	// starts, so later changes to the counters table leave it as it was.
	StatCounters []StatCounter `gorm:"serializer:json"`

	// SameAsID is, for a run launched without rerun whose simulation an
	// earlier succeeded run had done already (same trace, config and
	// simulator sums, same kernels), that run: this one was never
	// simulated, and carries a copy of its results and figures. nil for a
	// run that was simulated.
	SameAsID *string `gorm:"index"`

	// FailureClass says how a FAILED run failed, CANCELLED for a
	// cancelled one; "" otherwise.
	FailureClass FailureClass `gorm:"not null;default:'';index"`
	// FailureLine is the simulator log's decisive line for a failed run
	// (the deadlock report, the assertion, "Unknown Option: ..."); "" when
	// the log has none.
	FailureLine string `gorm:"not null;default:''"`
	// Figures is what produced the run and what it cost, recorded as it
	// ran and when it ended, so that its results never change after the
	// fact (a config edited or removed, another simulator installed).
	Figures RunFigures `gorm:"embedded"`

	// SampledByID is, on a segment of a sampled or a split run, that run;
	// nil on any other run.
	SampledByID *string `gorm:"index"`
	// Sampling is a sampled run's plan and projection (sampling.go); nil
	// on a run that simulates its kernels.
	Sampling *SampledRun `gorm:"serializer:json"`
	// Split is a split run's segments (split.go); nil on any other run.
	Split *SplitRun `gorm:"serializer:json"`
}

// RunFigures are a run's own figures: what produced it and what it cost.
// Zero values are unknown (not recorded, or a run from before they were).
type RunFigures struct {
	// CoreClockMHz is the config's core clock when the run was launched,
	// recorded again when it started under an edited config: its
	// simulated times are its cycles at this clock, whatever becomes of
	// the config (see runs.Manager.Results).
	CoreClockMHz float64 `gorm:"column:core_clock_mhz;not null;default:0"`
	// WallSeconds is the simulator process's wall time.
	WallSeconds float64 `gorm:"not null;default:0"`
	// SimCycles is a succeeded run's total simulated cycles, the sum of
	// its kernels' (a sampled run's projected total), recorded when it
	// succeeded so that a list of runs shows it without reading their
	// kernels; 0 for a run that did not succeed.
	SimCycles int64 `gorm:"column:sim_cycles;not null;default:0"`
	// PeakRSSBytes is the simulator's peak resident memory: the process's
	// rusage locally, sacct's MaxRSS on Slurm.
	PeakRSSBytes int64 `gorm:"column:peak_rss_bytes;not null;default:0"`
	// SimulatorBuild is the build lines the simulator printed
	// ("Accel-Sim [build ...]; GPGPU-Sim ... [build ...]").
	SimulatorBuild string `gorm:"not null;default:''"`
	// SimulatorSum, ConfigSum and TraceSum are SHA-256 content hashes of
	// the simulator binary, of the config files used, and of the trace's
	// simulated input (its kernelslist.g and the kernel files it names):
	// runs with the same three sums and kernel set give the same result.
	SimulatorSum string `gorm:"not null;default:''"`
	ConfigSum    string `gorm:"not null;default:''"`
	TraceSum     string `gorm:"not null;default:''"`
}

// FailureClass is how a simulation failed, as Accel-Sim's job_status.py
// classes failed jobs.
type FailureClass string

// The classes of failure.
const (
	FailureDeadlock          FailureClass = "DEADLOCK"
	FailureOutOfMemory       FailureClass = "OUT_OF_MEMORY"
	FailureSegfault          FailureClass = "SEGFAULT"
	FailureAssertion         FailureClass = "ASSERTION"
	FailureTimeLimit         FailureClass = "TIME_LIMIT"
	FailureCycleLimit        FailureClass = "CYCLE_LIMIT"
	FailureUnsupportedBinary FailureClass = "UNSUPPORTED_BINARY_VERSION"
	FailureUnsupportedTrace  FailureClass = "UNSUPPORTED_TRACE_TYPE"
	FailureBadConfig         FailureClass = "BAD_CONFIG_OPTION"
	FailureMissingTrace      FailureClass = "MISSING_TRACE_FILE"
	FailureCancelled         FailureClass = "CANCELLED"
	// FailureOther is every failure none of the above describes: a crash
	// by another signal, a log that ends early, an executor that could
	// not start the simulator.
	FailureOther FailureClass = "OTHER"
)

// StatCounter describes one simulator statistic: its name
// ("l2_read_hits"), its kind ("aggregate", "kernel" or "rate", as package
// accelsim/simstats reads them) and unit.
type StatCounter struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Unit string `json:"unit"`
}

// HasJob reports whether the run was given a batch job (Slurm.JobID),
// which outlives the server that submitted it: such a run is started, even
// while it is queued, and only its executor can end it.
func (r Run) HasJob() bool { return r.Slurm.JobID != nil }

// BaseConfig is the tested config the run's config is, or is a variant
// of.
func (r Run) BaseConfig() string {
	if r.ConfigBase != "" {
		return r.ConfigBase
	}
	return r.SimConfig
}

// IsFull reports whether r simulates every kernel of its trace: no
// subset, not sampled, not a segment. A split run is full: its segments
// simulate every launch, and its kernels are theirs.
func (r Run) IsFull() bool { return len(r.KernelIDs) == 0 && r.Sampling == nil && r.SampledByID == nil }

// Coordinated reports whether r is a run that is never simulated itself
// but follows runs of its own, its segments: a sampled or a split run.
func (r Run) Coordinated() bool { return r.Sampling != nil || r.Split != nil }

// SlurmJob is what Cascade knows of a run's Slurm batch job, as of its
// last poll.
type SlurmJob struct {
	// JobID is the job's id; for a task of a job array (the segments of
	// a sampled or split run, submitted together), the array's.
	JobID *int64
	// ArrayTaskID is the run's task in the job array JobID, nil for a
	// job of its own: squeue shows it as JobID_ArrayTaskID.
	ArrayTaskID *int
	Partition   string `gorm:"not null;default:''"`
	// Node is the node list the job ran on; "" before it started.
	Node string `gorm:"not null;default:''"`
	// State is Slurm's own state name ("PENDING", "RUNNING", "TIMEOUT",
	// "OUT_OF_MEMORY", ...), or "LOST" when Slurm no longer knows the job.
	State string `gorm:"not null;default:''"`
	// Reason is Slurm's reason for the state ("Priority", "Resources",
	// "TimeLimit", ...); "" for none.
	Reason string `gorm:"not null;default:''"`
}

// Ref is the job as squeue shows it and scancel takes it: "1234", or a
// job array's task "1234_5"; "" for none.
func (j SlurmJob) Ref() string {
	switch {
	case j.JobID == nil:
		return ""
	case j.ArrayTaskID != nil:
		return fmt.Sprintf("%d_%d", *j.JobID, *j.ArrayTaskID)
	}
	return fmt.Sprint(*j.JobID)
}

// ExecutorStatus says where runs execute and whether that answers: the
// Slurm executor is unhealthy while Slurm's commands fail or time out.
type ExecutorStatus struct {
	Kind    string // "local" or "slurm"
	Healthy bool
	// Message says what is wrong when unhealthy, and what the executor
	// found at start (accounting or not) when healthy; nil for none.
	Message *string
}

// RunKernel is the simulator's result for one kernel of a run: what its
// log says, stored as it is read, and, when a run's results are read,
// the kernel's simulated time and how it compares with the measured one.
type RunKernel struct {
	RunID           string `gorm:"primaryKey"`
	Seq             int    `gorm:"primaryKey;autoIncrement:false"` // launch order
	KernelID        *int   // from the trace file name; nil when it has none
	Context         *string
	Name            string `gorm:"not null"`
	TraceFile       string `gorm:"not null"`
	LaunchUID       int    `gorm:"not null"` // 0 when the log did not say
	SimCycles       int64  `gorm:"not null"`
	SimInstructions int64  `gorm:"not null"`
	IPC             float64
	// Truncated is set when the simulator's cycle limit cut the kernel
	// short: its numbers cover only part of it.
	Truncated bool `gorm:"not null"`
	// Stats are the kernel's statistics, in the order of its run's
	// StatCounters, encoded by accelsim/simstats (a few bytes a counter);
	// nil when the log gave none.
	Stats []byte
	// Simulated is, on a sampled run, true for a launch that was simulated
	// (a representative), false for one projected; nil on any other run.
	Simulated *bool
	// ProjectedFrom is, on a sampled run, the launch (its position in the
	// trace's kernel list) whose simulation projected this one; nil for a
	// simulated launch and on any other run.
	ProjectedFrom *int

	// SimTimeNs, MeasuredNs and ErrorPct are derived, never stored: nil
	// without a core clock, or without a measured time for the kernel.
	SimTimeNs  *float64 `gorm:"-"` // SimCycles at the config's core clock
	MeasuredNs *float64 `gorm:"-"` // from the trace's real timing
	ErrorPct   *float64 `gorm:"-"` // 100 * (SimTimeNs - MeasuredNs) / MeasuredNs
	// FullCycles and FullErrorPct are, on a sampled run checked against a
	// full run, that run's cycles of the launch and the error against
	// them: 100 * (SimCycles - FullCycles) / FullCycles.
	FullCycles   *int64   `gorm:"-"`
	FullErrorPct *float64 `gorm:"-"`
}

// KernelIDOrZero is KernelID, 0 when the trace file name gave none: the
// API's kernelId.
func (k RunKernel) KernelIDOrZero() int { return Deref(k.KernelID) }

// KnownLaunchUID is LaunchUID, nil when the log did not say: the API's
// launchUid.
func (k RunKernel) KnownLaunchUID() *int {
	if k.LaunchUID > 0 {
		return &k.LaunchUID
	}
	return nil
}

// RunWork is what a finished simulator process did and took: a run's
// warp instructions simulated (its kernels', as its trace's kernel list
// counts them) against its wall time. The simulator's rate on this
// server is measured from the runs of a config (SamplingPlan.estimate).
type RunWork struct {
	Run Run
	// Kernels is how many kernels it simulated; Counted those of them
	// whose trace has an instruction count, and Instructions their sum.
	Kernels, Counted int
	Instructions     int64
}
