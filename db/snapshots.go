package db

import "gorm.io/gorm"

// The schema snapshots of migrations from version 13 on (see migrations).

// Schema snapshots, version 13.

// runV13 and runKernelV13: sampled runs. A segment names the sampled run
// it is part of; a sampled run holds its plan and projection (JSON); its
// kernels say whether they were simulated or projected, and from which
// launch.
type runV13 struct {
	ID          string  `gorm:"primaryKey"`
	SampledByID *string `gorm:"index"`
	Sampling    string
}

func (runV13) TableName() string { return "runs" }

type runKernelV13 struct {
	RunID         string `gorm:"primaryKey"`
	Seq           int    `gorm:"primaryKey;autoIncrement:false"`
	Simulated     *bool
	ProjectedFrom *int
}

func (runKernelV13) TableName() string { return "run_kernels" }

// Schema snapshots, version 14.

type traceV14 struct {
	ID           string   `gorm:"primaryKey"`
	UploadSum    string   `gorm:"not null;default:''"`
	ScanWarnings []string `gorm:"serializer:json"`
}

func (traceV14) TableName() string { return "traces" }

// Schema snapshots, version 15.

// runV15: a variant's base config and its overrides (JSON).
type runV15 struct {
	ID           string `gorm:"primaryKey"`
	ConfigBase   string `gorm:"not null;default:''"`
	ConfigParams string
}

func (runV15) TableName() string { return "runs" }

// sweepV15: a design sweep's axes (JSON).
type sweepV15 struct {
	ID   string `gorm:"primaryKey"`
	Axes string
}

func (sweepV15) TableName() string { return "sweeps" }

// Schema snapshots, version 16.

// runV16: a succeeded run's total simulated cycles, recorded when it
// succeeded.
type runV16 struct {
	ID        string `gorm:"primaryKey"`
	SimCycles int64  `gorm:"column:sim_cycles;not null;default:0"`
}

func (runV16) TableName() string { return "runs" }

// migrateRunCycles adds runs' total simulated cycles (version 16) and
// fills it in for the runs that succeeded before: the sum of their stored
// kernels' cycles (a sampled run's are projected), in one statement that
// reads each run's kernels by the primary key's run_id prefix.
func migrateRunCycles(tx *gorm.DB) error {
	if err := addColumns(tx, &runV16{}, "SimCycles"); err != nil {
		return err
	}
	return tx.Exec("UPDATE runs SET sim_cycles = (SELECT COALESCE(SUM(k.sim_cycles), 0) FROM run_kernels k WHERE k.run_id = runs.id) "+
		"WHERE state = ? AND sim_cycles = 0", "SUCCEEDED").Error
}

// Schema snapshots, version 17.

// traceV17: the hardware profiles a trace's metadata.json named, as read
// (JSON).
type traceV17 struct {
	ID       string `gorm:"primaryKey"`
	Profiles string
}

func (traceV17) TableName() string { return "traces" }

// kernelCounterV17: a traced kernel's statistics as its hardware profiles
// measured them.
type kernelCounterV17 struct {
	TraceID string  `gorm:"primaryKey"`
	Seq     int     `gorm:"primaryKey;autoIncrement:false"`
	Stat    string  `gorm:"primaryKey"`
	Mean    float64 `gorm:"not null"`
	Min     float64 `gorm:"not null"`
	Max     float64 `gorm:"not null"`
	Count   int     `gorm:"not null"`
}

func (kernelCounterV17) TableName() string { return "kernel_counters" }

// migrateCounters adds traces' profiles and the kernel counters table
// (version 17).
func migrateCounters(tx *gorm.DB) error {
	if err := addColumns(tx, &traceV17{}, "Profiles"); err != nil {
		return err
	}
	if tx.Migrator().HasTable(&kernelCounterV17{}) {
		return nil // a database rolled back by a test
	}
	return tx.Migrator().CreateTable(&kernelCounterV17{})
}

// Schema snapshots, version 18.

// traceV18: the fingerprint of a trace's metadata.json without its
// profiles, so that a change of its profiles alone is told apart.
type traceV18 struct {
	ID              string `gorm:"primaryKey"`
	MetadataCoreSum string `gorm:"not null;default:''"`
}

func (traceV18) TableName() string { return "traces" }

// Schema snapshot, version 19.

// samplingPlanV19: whether a plan's warm-up is a step of the program.
type samplingPlanV19 struct {
	WarmupStep bool `gorm:"not null;default:false"`
}

func (samplingPlanV19) TableName() string { return "sampling_plans" }

// Schema snapshots, version 20.

// traceCounterStatsV20: the names of the statistics a trace's kernel
// counters are of, encoded (countercodec.go), one row a trace.
type traceCounterStatsV20 struct {
	TraceID string `gorm:"primaryKey"`
	Names   []byte `gorm:"not null"`
}

func (traceCounterStatsV20) TableName() string { return "trace_counter_stats" }

// kernelCounterValuesV20: a traced kernel's counters, encoded
// (countercodec.go), one row a kernel.
type kernelCounterValuesV20 struct {
	TraceID  string `gorm:"primaryKey"`
	Seq      int    `gorm:"primaryKey;autoIncrement:false"`
	Counters []byte `gorm:"not null"`
}

func (kernelCounterValuesV20) TableName() string { return "kernel_counter_values" }

// Schema snapshot, version 21.

// samplingStratumV21: why a stratum has its representatives, Neyman's
// allocation before rounding, what they cost and the stratum's share of
// the plan's variance.
type samplingStratumV21 struct {
	Why           string  `gorm:"not null;default:''"`
	Allocation    float64 `gorm:"not null;default:0"`
	Cost          int64   `gorm:"not null;default:0"`
	VarianceShare float64 `gorm:"not null;default:0"`
}

func (samplingStratumV21) TableName() string { return "sampling_strata" }

// Schema snapshot, version 22.

// runV22: a split run's segments (JSON).
type runV22 struct {
	ID    string `gorm:"primaryKey"`
	Split string
}

func (runV22) TableName() string { return "runs" }

// Schema snapshot, version 23.

// runV23: the task of a Slurm job array a run's job is (its segments
// submitted together).
type runV23 struct {
	ID               string `gorm:"primaryKey"`
	SlurmArrayTaskID *int
}

func (runV23) TableName() string { return "runs" }

// Schema snapshot, version 24.

// traceV24: the launches a trace lists without a kernel trace.
type traceV24 struct {
	ID              string `gorm:"primaryKey"`
	UntracedKernels int    `gorm:"not null;default:0"`
}

func (traceV24) TableName() string { return "traces" }

// kernelV24: a launch the tracer counted but did not trace.
type kernelV24 struct {
	SetID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Seq      int   `gorm:"primaryKey;autoIncrement:false"`
	Untraced bool  `gorm:"not null;default:false"`
}

func (kernelV24) TableName() string { return "kernels" }

// Schema snapshot, version 25.

// runV25: the CUDA context of each of a run's chosen kernel ids (JSON).
type runV25 struct {
	ID             string `gorm:"primaryKey"`
	KernelContexts string
}

func (runV25) TableName() string { return "runs" }

// Schema snapshot, version 26.

// traceV26: the architecture a trace's kernel headers give, which the
// simulator decodes it by (filled in by the next scan).
type traceV26 struct {
	ID         string `gorm:"primaryKey"`
	HeaderArch string `gorm:"not null;default:''"`
}

func (traceV26) TableName() string { return "traces" }
