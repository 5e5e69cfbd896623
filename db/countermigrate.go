package db

import (
	"database/sql"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// migrateKernelsSpan is how many kernels' counters migrateCounterRows
// reads at a time.
const migrateKernelsSpan = 2048

// migrateCounterRows moves the kernel counters of version 17's table, one
// row a counter, to one row a kernel (version 20; see countercodec.go),
// trace by trace, a span of kernels at a time, and drops the old table.
// Rows of a negative seq, which no kernel has and no read asked for,
// are dropped.
func migrateCounterRows(tx *gorm.DB) error {
	for _, t := range []any{&traceCounterStatsV20{}, &kernelCounterValuesV20{}} {
		if tx.Migrator().HasTable(t) {
			continue // a database rolled back by a test
		}
		if err := tx.Migrator().CreateTable(t); err != nil {
			return err
		}
	}
	if !tx.Migrator().HasTable(&kernelCounterV17{}) {
		return nil
	}
	var traces []string
	if err := tx.Raw("SELECT DISTINCT trace_id FROM kernel_counters ORDER BY trace_id").Scan(&traces).Error; err != nil {
		return err
	}
	for _, id := range traces {
		if err := migrateTraceCounters(tx, id); err != nil {
			return fmt.Errorf("kernel counters of %s: %w", id, err)
		}
	}
	return tx.Migrator().DropTable(&kernelCounterV17{})
}

// migrateTraceCounters moves one trace's counters.
func migrateTraceCounters(tx *gorm.DB, traceID string) error {
	for _, t := range []string{"kernel_counter_values", "trace_counter_stats"} {
		if err := tx.Exec("DELETE FROM "+t+" WHERE trace_id = ?", traceID).Error; err != nil {
			return err
		}
	}
	var names []string
	if err := tx.Raw("SELECT DISTINCT stat FROM kernel_counters WHERE trace_id = ? AND seq >= 0", traceID).Scan(&names).Error; err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names) // byte order, whatever the database's collation
	at := make(map[string]int32, len(names))
	for i, n := range names {
		at[n] = int32(i)
	}
	if err := tx.Exec("INSERT INTO trace_counter_stats (trace_id, names) VALUES (?, ?)", traceID, encodeStatNames(names)).Error; err != nil {
		return err
	}
	insert, per := "INSERT INTO", 1000
	if tx.Dialector.Name() == "sqlite" {
		insert, per = "INSERT OR FAIL INTO", counterRowsPerInsert
	}
	var buf []byte
	var rows []counterRow
	for next := 0; ; {
		var lo sql.NullInt64
		if err := tx.Raw("SELECT MIN(seq) FROM kernel_counters WHERE trace_id = ? AND seq >= ?", traceID, next).Scan(&lo).Error; err != nil {
			return err
		}
		if !lo.Valid {
			return nil
		}
		next = int(lo.Int64) + migrateKernelsSpan
		var old []kernelCounterV17
		err := tx.Where("trace_id = ? AND seq >= ? AND seq < ?", traceID, lo.Int64, next).Order("seq").Find(&old).Error
		if err != nil {
			return err
		}
		cs := make([]cascade.KernelCounter, len(old))
		idx := make([]int32, len(old))
		for i, c := range old {
			cs[i] = cascade.KernelCounter{Seq: c.Seq, Stat: c.Stat, Mean: c.Mean, Min: c.Min, Max: c.Max, Count: c.Count}
			idx[i] = at[c.Stat]
		}
		order, err := counterOrder(cs, idx)
		if err != nil {
			return err
		}
		buf, rows, _ = encodeKernels(buf, rows, cs, idx, order, len(order))
		err = insertCounterRowsSQL(rows, traceID, insert, per, func(q string, args []any) error { return tx.Exec(q, args...).Error })
		if err != nil {
			return err
		}
	}
}
