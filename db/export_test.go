package db

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
)

// Explain returns the database's plan for query, a statement as logged at
// LevelSQL, one step a line. On PostgreSQL it first runs ANALYZE, so the
// planner sees the row counts autovacuum would give it.
func (d *DB) Explain(ctx context.Context, query string) (string, error) {
	prefix := "EXPLAIN QUERY PLAN "
	if d.dialect == "postgres" {
		if err := d.w.WithContext(ctx).Exec("ANALYZE").Error; err != nil {
			return "", err
		}
		prefix = "EXPLAIN "
	}
	rows, err := d.r.WithContext(ctx).Raw(prefix + query).Rows()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s\n", vals[len(vals)-1])
	}
	return b.String(), rows.Err()
}

// RollBackTo6 undoes migration 7: kernels keyed by trace id again, no
// kernel sets.
func (d *DB) RollBackTo6(t *testing.T) {
	t.Helper()
	d.stopCollector()
	m := d.w.Migrator()
	if err := m.DropTable(&kernelV7{}, &kernelSetV7{}); err != nil {
		t.Fatal(err)
	}
	if err := m.DropColumn(&traceV7{}, "KernelSetID"); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTable(&kernelV1{}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddColumn(&kernelV4{}, "DemangledName"); err != nil {
		t.Fatal(err)
	}
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version >= 7").Error; err != nil {
		t.Fatal(err)
	}
}

// InsertOldKernel inserts a kernel row as version 5 stored them.
func (d *DB) InsertOldKernel(t *testing.T, traceID string, seq int, name string, insts int64) {
	t.Helper()
	err := d.w.Exec("INSERT INTO kernels (trace_id, seq, kernel_id, name, demangled_name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z, instructions) "+
		"VALUES (?, ?, ?, ?, '', ?, 1, 1, 1, 32, 1, 1, ?)", traceID, seq, seq+1, name, fmt.Sprintf("kernel-%d.trace", seq+1), insts).Error
	if err != nil {
		t.Fatal(err)
	}
}

// KernelRows counts the stored kernel rows of every set, and the sets.
func (d *DB) KernelRows(t testing.TB) (rows, sets int64) {
	t.Helper()
	if err := d.w.Model(&kernelRow{}).Count(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if err := d.w.Model(&kernelSet{}).Count(&sets).Error; err != nil {
		t.Fatal(err)
	}
	return rows, sets
}

// SetChunkRows sets how many kernels a chunk of an ingest holds, on SQLite
// and PostgreSQL, until the test ends.
func SetChunkRows(t testing.TB, n int) {
	old, oldCopy := sqliteChunk, copyChunk
	sqliteChunk, copyChunk = n, n
	t.Cleanup(func() { sqliteChunk, copyChunk = old, oldCopy })
}

// SetUpdatedAt stores at as the updated_at of the row of table ("traces"
// or "runs") with id, as a clock that was ahead and has since been
// stepped back left it.
func (d *DB) SetUpdatedAt(ctx context.Context, table, id string, at time.Time) error {
	return d.w.WithContext(ctx).Table(table).Where("id = ?", id).Update("updated_at", at).Error
}

// LatestSchemaVersion is the version a database has once every migration
// of this build ran.
var LatestSchemaVersion = migrations[len(migrations)-1].version

// SetRunKernelChunk sets the rows of one transaction of AppendRunKernels
// on SQLite until the test ends.
func SetRunKernelChunk(t testing.TB, n int) {
	old := runKernelChunk
	runKernelChunk = n
	t.Cleanup(func() { runKernelChunk = old })
}

// Size returns the bytes the run_kernels table and its index take on
// PostgreSQL, and the whole database file on SQLite (after a checkpoint).
func (d *DB) Size(ctx context.Context) (int64, error) {
	var n int64
	q := "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
	if d.dialect == "postgres" {
		q = "SELECT pg_total_relation_size('run_kernels')"
	} else if err := d.w.WithContext(ctx).Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		return 0, err
	}
	err := d.r.WithContext(ctx).Raw(q).Scan(&n).Error
	return n, err
}

// RollBackRunCycles undoes migration 16: runs without their total
// simulated cycles.
func (d *DB) RollBackRunCycles(t *testing.T) {
	t.Helper()
	if err := d.w.Migrator().DropColumn(&runV16{}, "SimCycles"); err != nil {
		t.Fatal(err)
	}
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version = 16").Error; err != nil {
		t.Fatal(err)
	}
}

// RollBackCounterRows undoes migration 20: kernel counters stored one
// row a counter, as version 17 stored them, and none stored.
func (d *DB) RollBackCounterRows(t testing.TB) {
	t.Helper()
	m := d.w.Migrator()
	if err := m.DropTable(&traceCounterStatsV20{}, &kernelCounterValuesV20{}); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTable(&kernelCounterV17{}); err != nil {
		t.Fatal(err)
	}
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version >= 20").Error; err != nil {
		t.Fatal(err)
	}
}

// InsertOldCounters inserts counters, of the trace each names, as
// version 17 stored them.
func (d *DB) InsertOldCounters(t testing.TB, cs []cascade.KernelCounter) {
	t.Helper()
	rows := make([]kernelCounterV17, len(cs))
	for i, c := range cs {
		rows[i] = kernelCounterV17{TraceID: c.TraceID, Seq: c.Seq, Stat: c.Stat, Mean: c.Mean, Min: c.Min, Max: c.Max, Count: c.Count}
	}
	if err := d.w.CreateInBatches(rows, 100).Error; err != nil {
		t.Fatal(err)
	}
}

// HasTable says whether the database has the table.
func (d *DB) HasTable(name string) bool { return d.w.Migrator().HasTable(name) }
