package db

import "gorm.io/gorm"

// The schema snapshots of migrations from version 14 on (see migrations).

// Schema snapshots, version 14.

type traceV14 struct {
	ID           string   `gorm:"primaryKey"`
	UploadSum    string   `gorm:"not null;default:''"`
	ScanWarnings []string `gorm:"serializer:json"`
}

func (traceV14) TableName() string { return "traces" }

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
