package db

import (
	"strings"
	"time"

	"github.com/cascade-sim/cascade/internal/kernelname"
	"gorm.io/gorm"
)

// The schemas of the tables as migrations 1 to 12 left them (later ones
// are in snapshots.go), and the migrations that convert rows: each
// migration adds exactly what its snapshot declares, whatever the
// current types have become.

// Schema snapshots, version 1.

type traceV1 struct {
	ID                 string `gorm:"primaryKey"`
	Seq                int64  `gorm:"not null;uniqueIndex:idx_traces_seq"`
	State              string `gorm:"not null;index:idx_traces_state"`
	Error              *string
	Model              *string
	Layers             *string
	Prompts            string
	SourceGPU          *string
	TraceGPUArch       string `gorm:"not null"`
	SuggestedSimConfig *string
	KernelCount        int   `gorm:"not null"`
	Bytes              int64 `gorm:"not null"`
	HasRealTiming      bool  `gorm:"not null"`
	HasStepTimeline    bool  `gorm:"not null"`
	Sample             bool  `gorm:"not null"`
	Warnings           string
	Signature          string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

func (traceV1) TableName() string { return "traces" }

type kernelV1 struct {
	TraceID      string `gorm:"primaryKey"`
	Seq          int    `gorm:"primaryKey;autoIncrement:false"`
	KernelID     int    `gorm:"not null"`
	Context      *string
	Name         string `gorm:"not null"`
	TraceFile    string `gorm:"not null"`
	GridX        int    `gorm:"not null"`
	GridY        int    `gorm:"not null"`
	GridZ        int    `gorm:"not null"`
	BlockX       int    `gorm:"not null"`
	BlockY       int    `gorm:"not null"`
	BlockZ       int    `gorm:"not null"`
	Instructions *int64
}

func (kernelV1) TableName() string { return "kernels" }

// Schema snapshots, version 2.

type runV2 struct {
	ID           string `gorm:"primaryKey"`
	Seq          int64  `gorm:"not null;uniqueIndex:idx_runs_seq"`
	TraceID      string `gorm:"not null;index:idx_runs_trace_id"`
	SimConfig    string `gorm:"not null"`
	KernelIDs    string
	Label        *string
	State        string `gorm:"not null;index:idx_runs_state"`
	Error        *string
	Executor     string `gorm:"not null"`
	KernelsDone  int    `gorm:"not null"`
	KernelsTotal int    `gorm:"not null"`
	History      string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	StartedAt    *time.Time
	FinishedAt   *time.Time
}

func (runV2) TableName() string { return "runs" }

type runKernelV2 struct {
	RunID           string `gorm:"primaryKey"`
	Seq             int    `gorm:"primaryKey;autoIncrement:false"`
	KernelID        *int
	Context         *string
	Name            string `gorm:"not null"`
	TraceFile       string `gorm:"not null"`
	LaunchUID       int    `gorm:"not null"`
	SimCycles       int64  `gorm:"not null"`
	SimInstructions int64  `gorm:"not null"`
	IPC             float64
	Truncated       bool `gorm:"not null"`
}

func (runKernelV2) TableName() string { return "run_kernels" }

// Schema snapshots, version 3.

type traceV3 struct {
	ID          string `gorm:"primaryKey"`
	MetadataSum string `gorm:"not null;default:''"`
}

func (traceV3) TableName() string { return "traces" }

// Schema snapshots, version 4.

type kernelV4 struct {
	TraceID       string `gorm:"primaryKey"`
	Seq           int    `gorm:"primaryKey;autoIncrement:false"`
	Name          string `gorm:"not null"`
	DemangledName string `gorm:"not null;default:''"`
}

func (kernelV4) TableName() string { return "kernels" }

// Schema snapshots, version 5.

type runV5 struct {
	ID             string `gorm:"primaryKey"`
	SlurmJobID     *int64
	SlurmPartition string `gorm:"not null;default:''"`
	SlurmNode      string `gorm:"not null;default:''"`
	SlurmState     string `gorm:"not null;default:''"`
	SlurmReason    string `gorm:"not null;default:''"`
}

func (runV5) TableName() string { return "runs" }

// Schema snapshots, version 6.

type sweepV6 struct {
	ID         string `gorm:"primaryKey"`
	Seq        int64  `gorm:"not null;uniqueIndex:idx_sweeps_seq"`
	Label      *string
	TraceIDs   string
	SimConfigs string
	RunCount   int    `gorm:"not null"`
	Executor   string `gorm:"not null;default:''"`
	CreatedAt  time.Time
}

func (sweepV6) TableName() string { return "sweeps" }

type runV6 struct {
	ID      string  `gorm:"primaryKey"`
	SweepID *string `gorm:"index:idx_runs_sweep_id"`
}

func (runV6) TableName() string { return "runs" }

// backfillDemangled fills in the demangled names of the kernels stored
// before version 4, a batch at a time.
func backfillDemangled(tx *gorm.DB) error {
	const batch = 1000
	for offset := 0; ; offset += batch {
		var rows []kernelV4
		err := tx.Model(&kernelV4{}).Where("name LIKE ? ESCAPE '\\'", `\_Z%`).
			Order("trace_id, seq").Offset(offset).Limit(batch).Find(&rows).Error
		if err != nil {
			return err
		}
		for _, k := range rows {
			full, ok := kernelname.Demangle(k.Name)
			if !ok {
				continue
			}
			err := tx.Model(&kernelV4{}).Where("trace_id = ? AND seq = ?", k.TraceID, k.Seq).
				Update("demangled_name", full).Error
			if err != nil {
				return err
			}
		}
		if len(rows) < batch {
			return nil
		}
	}
}

// Schema snapshots, version 7.

type traceV7 struct {
	ID          string `gorm:"primaryKey"`
	KernelSetID *int64
}

func (traceV7) TableName() string { return "traces" }

type kernelSetV7 struct {
	ID        int64  `gorm:"primaryKey;autoIncrement:false"`
	State     string `gorm:"not null;index:idx_kernel_sets_state"`
	N         int64  `gorm:"not null"`
	CreatedAt time.Time
}

func (kernelSetV7) TableName() string { return "kernel_sets" }

type kernelV7 struct {
	SetID         int64 `gorm:"primaryKey;autoIncrement:false"`
	Seq           int   `gorm:"primaryKey;autoIncrement:false"`
	KernelID      int   `gorm:"not null"`
	Context       *string
	Name          string `gorm:"not null"`
	DemangledName string `gorm:"not null;default:''"`
	TraceFile     string `gorm:"not null"`
	GridX         int    `gorm:"not null"`
	GridY         int    `gorm:"not null"`
	GridZ         int    `gorm:"not null"`
	BlockX        int    `gorm:"not null"`
	BlockY        int    `gorm:"not null"`
	BlockZ        int    `gorm:"not null"`
	Instructions  *int64
}

func (kernelV7) TableName() string { return "kernels" }

// migrateKernelSets moves kernels from one list per trace, keyed by trace
// id, to kernel sets: each trace's kernels become one set, numbered with
// the trace's seq, that the trace's kernel_set_id points at. Kernels of no
// trace, which no one could read, are dropped.
func migrateKernelSets(tx *gorm.DB) error {
	steps := []string{"ALTER TABLE kernels RENAME TO kernels_v6"}
	if tx.Dialector.Name() == "postgres" {
		// Index names are the schema's: free kernels_pkey for the new table.
		steps = append(steps, "ALTER TABLE kernels_v6 RENAME CONSTRAINT kernels_pkey TO kernels_v6_pkey")
	}
	for _, s := range steps {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	if err := tx.Migrator().CreateTable(&kernelSetV7{}); err != nil {
		return err
	}
	if tx.Dialector.Name() == "sqlite" {
		// WITHOUT ROWID: the rows live in the primary key's b-tree, one
		// insert a kernel instead of a row and an index entry.
		err := tx.Exec("CREATE TABLE kernels (set_id integer NOT NULL, seq integer NOT NULL, kernel_id integer NOT NULL, " +
			"context text, name text NOT NULL, demangled_name text NOT NULL DEFAULT '', trace_file text NOT NULL, " +
			"grid_x integer NOT NULL, grid_y integer NOT NULL, grid_z integer NOT NULL, " +
			"block_x integer NOT NULL, block_y integer NOT NULL, block_z integer NOT NULL, instructions integer, " +
			"PRIMARY KEY (set_id, seq)) WITHOUT ROWID").Error
		if err != nil {
			return err
		}
	} else if err := tx.Migrator().CreateTable(&kernelV7{}); err != nil {
		return err
	}
	if err := tx.Migrator().AddColumn(&traceV7{}, "KernelSetID"); err != nil {
		return err
	}
	cols := "kernel_id, context, name, demangled_name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z, instructions"
	for _, s := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO kernel_sets (id, state, n, created_at) SELECT t.seq, 'current', c.n, ? FROM traces t " +
			"JOIN (SELECT trace_id, COUNT(*) AS n FROM kernels_v6 GROUP BY trace_id) c ON c.trace_id = t.id", []any{tx.NowFunc()}},
		{"UPDATE traces SET kernel_set_id = seq WHERE id IN (SELECT trace_id FROM kernels_v6)", nil},
		{"INSERT INTO kernels (set_id, seq, " + cols + ") SELECT t.seq, k.seq, k." +
			strings.ReplaceAll(cols, ", ", ", k.") + " FROM kernels_v6 k JOIN traces t ON t.id = k.trace_id", nil},
		{"DROP TABLE kernels_v6", nil},
	} {
		if err := tx.Exec(s.sql, s.args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// runV8 and runKernelV8: a run's statistics counters, failure class and
// own figures, and each kernel's encoded statistics.
type runV8 struct {
	ID             string `gorm:"primaryKey"`
	StatCounters   string
	FailureClass   string  `gorm:"not null;default:''"`
	CoreClockMHz   float64 `gorm:"column:core_clock_mhz;not null;default:0"`
	WallSeconds    float64 `gorm:"not null;default:0"`
	PeakRSSBytes   int64   `gorm:"column:peak_rss_bytes;not null;default:0"`
	SimulatorBuild string  `gorm:"not null;default:''"`
	SimulatorSum   string  `gorm:"not null;default:''"`
	ConfigSum      string  `gorm:"not null;default:''"`
	TraceSum       string  `gorm:"not null;default:''"`
}

func (runV8) TableName() string { return "runs" }

type runKernelV8 struct {
	RunID string `gorm:"primaryKey"`
	Seq   int    `gorm:"primaryKey;autoIncrement:false"`
	Stats []byte
}

func (runKernelV8) TableName() string { return "run_kernels" }

// runV12: the succeeded run whose results a run launched without rerun
// reused.
type runV12 struct {
	ID       string  `gorm:"primaryKey"`
	SameAsID *string `gorm:"index"`
}

func (runV12) TableName() string { return "runs" }

// traceV9: where a trace's architecture came from.
type traceV9 struct {
	ID               string `gorm:"primaryKey"`
	TraceGPUArchFrom string `gorm:"column:trace_gpu_arch_from;not null;default:''"`
}

func (traceV9) TableName() string { return "traces" }

// runV10: a failed run's decisive log line, and an index for listing runs
// by failure class.
type runV10 struct {
	ID           string `gorm:"primaryKey"`
	FailureClass string `gorm:"index:idx_runs_failure_class;not null;default:''"`
	FailureLine  string `gorm:"not null;default:''"`
}

func (runV10) TableName() string { return "runs" }

// samplingPlanV11 and samplingStratumV11: sampling plans and their
// strata, as version 11 created them.
type samplingPlanV11 struct {
	ID                    string `gorm:"primaryKey"`
	Seq                   int64  `gorm:"not null;uniqueIndex:idx_sampling_plans_seq"`
	TraceID               string `gorm:"not null;index:idx_sampling_plans_trace_id"`
	Method                string `gorm:"not null"`
	Basis                 string `gorm:"not null"`
	TargetError           *float64
	TargetInstructions    *int64
	ErrorBound            float64 `gorm:"not null"`
	Warmup                int     `gorm:"not null"`
	Launches              int     `gorm:"not null"`
	UntimedLaunches       int     `gorm:"not null"`
	Instructions          int64   `gorm:"not null"`
	Samples               int     `gorm:"not null"`
	SimulatedLaunches     int     `gorm:"not null"`
	SimulatedInstructions int64   `gorm:"not null"`
	SimulatedFraction     float64 `gorm:"not null"`
	Total                 float64 `gorm:"not null"`
	Estimate              float64 `gorm:"not null"`
	ExpectedError         float64 `gorm:"not null"`
	CILow                 float64 `gorm:"column:ci_low;not null"`
	CIHigh                float64 `gorm:"column:ci_high;not null"`
	CreatedAt             time.Time
}

func (samplingPlanV11) TableName() string { return "sampling_plans" }

type samplingStratumV11 struct {
	PlanID           string `gorm:"primaryKey"`
	Idx              int    `gorm:"primaryKey;autoIncrement:false"`
	Name             string `gorm:"not null"`
	GridX            *int
	GridY            *int
	GridZ            *int
	BlockX           *int
	BlockY           *int
	BlockZ           *int
	Size             int `gorm:"not null"`
	MeanDurationNs   *float64
	CVDuration       *float64 `gorm:"column:cv_duration"`
	MeanInstructions float64  `gorm:"not null"`
	CVInstructions   float64  `gorm:"column:cv_instructions;not null"`
	Members          []byte
	Representatives  []byte
}

func (samplingStratumV11) TableName() string { return "sampling_strata" }

// migrateSamplingPlans creates the tables of sampling plans (version 11).
func migrateSamplingPlans(tx *gorm.DB) error {
	for _, t := range []any{&samplingPlanV11{}, &samplingStratumV11{}} {
		if tx.Migrator().HasTable(t) {
			continue // a database rolled back by a test
		}
		if err := tx.Migrator().CreateTable(t); err != nil {
			return err
		}
	}
	return nil
}
