package db

import (
	"context"
	"fmt"
	"strings"
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
