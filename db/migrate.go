package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
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
	{20, "kernel counters: one row a kernel", migrateCounterRows},
	{21, "sampling strata: allocation and cost", func(tx *gorm.DB) error {
		return addColumns(tx, &samplingStratumV21{}, "Why", "Allocation", "Cost", "VarianceShare")
	}},
	{22, "split runs", func(tx *gorm.DB) error {
		return addColumns(tx, &runV22{}, "Split")
	}},
	{23, "runs: Slurm job array task", func(tx *gorm.DB) error {
		return addColumns(tx, &runV23{}, "SlurmArrayTaskID")
	}},
	{24, "traces and kernels: launches without a kernel trace", func(tx *gorm.DB) error {
		if err := addColumns(tx, &traceV24{}, "UntracedKernels"); err != nil {
			return err
		}
		return addColumns(tx, &kernelV24{}, "Untraced")
	}},
	{25, "runs: the CUDA context of each chosen kernel", func(tx *gorm.DB) error {
		return addColumns(tx, &runV25{}, "KernelContexts")
	}},
	{26, "traces: the architecture the kernel headers give", func(tx *gorm.DB) error {
		return addColumns(tx, &traceV26{}, "HeaderArch")
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
