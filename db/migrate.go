package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade/internal/kernelname"
)

// A migration moves the schema from version-1 to version. Each runs in its own
// transaction with the version row, so a crash leaves the schema at a version
// that exists. Migrations never change once released: they create tables from
// the struct snapshots below (from version 14 on, in snapshots.go), not from
// package cascade's live types, so a later field change needs a new migration.
type migration struct {
	version int
	name    string
	up      func(tx *gorm.DB) error
}

var migrations = []migration{
	{1, "traces and kernels", func(tx *gorm.DB) error {
		return tx.Migrator().CreateTable(&traceV1{}, &kernelV1{})
	}},
	{2, "runs and their kernels", func(tx *gorm.DB) error {
		return tx.Migrator().CreateTable(&runV2{}, &runKernelV2{})
	}},
	{3, "traces: metadata sum", func(tx *gorm.DB) error {
		return tx.Migrator().AddColumn(&traceV3{}, "MetadataSum")
	}},
	{4, "demangled kernel names", func(tx *gorm.DB) error {
		if err := tx.Migrator().AddColumn(&kernelV4{}, "DemangledName"); err != nil {
			return err
		}
		return backfillDemangled(tx)
	}},
	{5, "runs: Slurm job", func(tx *gorm.DB) error {
		for _, c := range []string{"SlurmJobID", "SlurmPartition", "SlurmNode", "SlurmState", "SlurmReason"} {
			if tx.Migrator().HasColumn(&runV5{}, c) {
				continue // a database rolled back by a test
			}
			if err := tx.Migrator().AddColumn(&runV5{}, c); err != nil {
				return err
			}
		}
		return nil
	}},
	{6, "sweeps", func(tx *gorm.DB) error {
		if !tx.Migrator().HasTable(&sweepV6{}) { // else a database rolled back by a test
			if err := tx.Migrator().CreateTable(&sweepV6{}); err != nil {
				return err
			}
		}
		if !tx.Migrator().HasColumn(&runV6{}, "SweepID") {
			if err := tx.Migrator().AddColumn(&runV6{}, "SweepID"); err != nil {
				return err
			}
		}
		if tx.Migrator().HasIndex(&runV6{}, "idx_runs_sweep_id") {
			return nil
		}
		return tx.Migrator().CreateIndex(&runV6{}, "idx_runs_sweep_id")
	}},
	{7, "kernel sets", migrateKernelSets},
	{8, "run statistics, failure classes and figures", func(tx *gorm.DB) error {
		err := addColumns(tx, &runV8{}, "StatCounters", "FailureClass", "CoreClockMHz", "WallSeconds",
			"PeakRSSBytes", "SimulatorBuild", "SimulatorSum", "ConfigSum", "TraceSum")
		if err != nil {
			return err
		}
		return addColumns(tx, &runKernelV8{}, "Stats")
	}},
	{9, "traces: where the architecture came from", func(tx *gorm.DB) error {
		return addColumns(tx, &traceV9{}, "TraceGPUArchFrom")
	}},
	{10, "runs: failure line, failure class index", func(tx *gorm.DB) error {
		if err := addColumns(tx, &runV10{}, "FailureLine"); err != nil {
			return err
		}
		if tx.Migrator().HasIndex(&runV10{}, "idx_runs_failure_class") {
			return nil // a database rolled back by a test
		}
		return tx.Migrator().CreateIndex(&runV10{}, "idx_runs_failure_class")
	}},
	{11, "sampling plans", migrateSamplingPlans},
	{12, "runs: the run a launch reused", func(tx *gorm.DB) error {
		if err := addColumns(tx, &runV12{}, "SameAsID"); err != nil {
			return err
		}
		if tx.Migrator().HasIndex(&runV12{}, "idx_runs_same_as_id") {
			return nil // a database rolled back by a test
		}
		return tx.Migrator().CreateIndex(&runV12{}, "idx_runs_same_as_id")
	}},
	{13, "sampled runs: segments, projections", func(tx *gorm.DB) error {
		if err := addColumns(tx, &runV13{}, "SampledByID", "Sampling"); err != nil {
			return err
		}
		if err := addColumns(tx, &runKernelV13{}, "Simulated", "ProjectedFrom"); err != nil {
			return err
		}
		if tx.Migrator().HasIndex(&runV13{}, "idx_runs_sampled_by_id") {
			return nil // a database rolled back by a test
		}
		return tx.Migrator().CreateIndex(&runV13{}, "idx_runs_sampled_by_id")
	}},
	{14, "traces: upload sum, scan warnings", func(tx *gorm.DB) error {
		return addColumns(tx, &traceV14{}, "UploadSum", "ScanWarnings")
	}},
	{15, "runs: config variants; sweeps: axes", func(tx *gorm.DB) error {
		if err := addColumns(tx, &runV15{}, "ConfigBase", "ConfigParams"); err != nil {
			return err
		}
		return addColumns(tx, &sweepV15{}, "Axes")
	}},
	{16, "runs: total cycles", migrateRunCycles},
	{17, "hardware counters: traces' profiles, kernels' counters", migrateCounters},
	{18, "traces: metadata sum without profiles", func(tx *gorm.DB) error {
		return addColumns(tx, &traceV18{}, "MetadataCoreSum")
	}},
	{19, "sampling plans: warm-up kind", func(tx *gorm.DB) error {
		return addColumns(tx, &samplingPlanV19{}, "WarmupStep")
	}},
}

// addColumns adds the named fields of model's table that it lacks (a
// database rolled back by a test may have them).
func addColumns(tx *gorm.DB, model any, fields ...string) error {
	for _, f := range fields {
		if tx.Migrator().HasColumn(model, f) {
			continue
		}
		if err := tx.Migrator().AddColumn(model, f); err != nil {
			return fmt.Errorf("add %s: %w", f, err)
		}
	}
	return nil
}

type schemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// ErrSchemaTooNew is returned by Open when the database was migrated by a
// newer Cascade than this one.
var ErrSchemaTooNew = errors.New("db: database schema is newer than this cascade")

func (d *DB) migrate(ctx context.Context) error {
	w := d.w.WithContext(ctx)
	if err := w.AutoMigrate(&schemaMigration{}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for {
		applied := false
		err := w.Transaction(func(tx *gorm.DB) error {
			if d.dialect == "postgres" {
				// Two servers starting at once on one database take turns.
				if err := tx.Exec("SELECT pg_advisory_xact_lock(7411)").Error; err != nil {
					return err
				}
			}
			var done []int
			if err := tx.Model(&schemaMigration{}).Pluck("version", &done).Error; err != nil {
				return err
			}
			m, ok, err := nextMigration(done)
			if err != nil || !ok {
				return err
			}
			if err := m.up(tx); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
			applied = true
			d.log.Info("migrated database", "version", m.version, "name", m.name)
			return tx.Create(&schemaMigration{Version: m.version, Name: m.name, AppliedAt: time.Now().UTC()}).Error
		})
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if !applied {
			return nil
		}
	}
}

// nextMigration is the first migration, in version order, that is not
// among the applied versions: a database that missed one (a gap left by
// a branch that numbered its migration differently) gets it too. A
// version this build does not know is ErrSchemaTooNew.
func nextMigration(applied []int) (migration, bool, error) {
	have := map[int]bool{}
	known := migrations[len(migrations)-1].version
	for _, v := range applied {
		if v > known {
			return migration{}, false, fmt.Errorf("%w: version %d, this build knows %d", ErrSchemaTooNew, v, known)
		}
		have[v] = true
	}
	for _, m := range migrations {
		if !have[m.version] {
			return m, true, nil
		}
	}
	return migration{}, false, nil
}

// SchemaVersion returns the version the database is migrated to.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.read(ctx).Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&v).Error
	return v, err
}

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
