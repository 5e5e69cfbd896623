package db

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
)

// Ping reads the schema version on a reading connection, a query that
// reaches SQLite's file (SELECT 1 would not) or the PostgreSQL server:
// whether the database answers, for /healthz.
func (d *DB) Ping(ctx context.Context) error {
	var v int
	if err := d.read(ctx).Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&v).Error; err != nil {
		return err
	}
	if v == 0 {
		return fmt.Errorf("schema_migrations is empty: the database is not migrated")
	}
	return nil
}

// TraceCounts counts traces by state, the sample included.
func (d *DB) TraceCounts(ctx context.Context) (map[cascade.TraceState]int64, error) {
	return countByState[cascade.TraceState](ctx, d, &cascade.Trace{})
}

// RunCounts counts runs by state.
func (d *DB) RunCounts(ctx context.Context) (map[cascade.RunState]int64, error) {
	return countByState[cascade.RunState](ctx, d, &cascade.Run{})
}

func countByState[S ~string](ctx context.Context, d *DB, model any) (map[S]int64, error) {
	var rows []struct {
		State string
		N     int64
	}
	if err := d.read(ctx).Model(model).Select("state, COUNT(*) AS n").Group("state").Scan(&rows).Error; err != nil {
		return nil, err
	}
	n := make(map[S]int64, len(rows))
	for _, r := range rows {
		n[S(r.State)] = r.N
	}
	return n, nil
}
