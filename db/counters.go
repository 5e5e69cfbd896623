package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// countersPerTx is about how many counters one transaction inserts, in
// whole kernels: other writers wait for no more than that.
const countersPerTx = 5000

// counterRowsPerInsert is the rows (kernels) of one SQLite INSERT: its
// driver matches each argument to its parameter by a linear search,
// quadratic in a statement's parameters, so a few rows a statement is
// fastest. PostgreSQL gets a COPY.
const counterRowsPerInsert = 16

// ReplaceKernelCounters replaces the hardware counters of the trace's
// kernels with cs (none when cs is empty), one row a kernel (see
// countercodec.go): the old ones go in one transaction with the trace's
// statistic names and the first kernels' counters, the rest are inserted
// about countersPerTx counters at a time, so a million kernels' counters
// never hold the writer long. The post-processor calls it before the
// trace becomes ready, so readers of a ready trace see them whole. A
// kernel given a statistic twice is an error, and nothing is changed.
func (d *DB) ReplaceKernelCounters(ctx context.Context, traceID string, cs []cascade.KernelCounter) error {
	names, idx := statNames(cs)
	order, err := counterOrder(cs, idx)
	if err != nil {
		return fmt.Errorf("replace kernel counters of %s: %w", traceID, err)
	}
	var buf []byte
	var rows []counterRow
	for first := true; first || len(order) > 0; first = false {
		err = d.rawTx(ctx, func(conn *sql.Conn) error {
			if first {
				if err := d.dropCountersConn(ctx, conn, traceID); err != nil {
					return err
				}
				if len(names) > 0 {
					q := d.sql("INSERT INTO trace_counter_stats (trace_id, names) VALUES (?, ?)")
					if _, err := conn.ExecContext(ctx, q, traceID, encodeStatNames(names)); err != nil {
						return err
					}
				}
			}
			buf, rows, order = encodeKernels(buf, rows, cs, idx, order, countersPerTx)
			return d.insertCounterRows(ctx, conn, traceID, rows)
		})
		if err != nil {
			return fmt.Errorf("replace kernel counters of %s: %w", traceID, err)
		}
	}
	return nil
}

// insertCounterRows inserts rows, as the trace's, on conn: with a COPY
// on PostgreSQL, with multi-row INSERTs on SQLite.
func (d *DB) insertCounterRows(ctx context.Context, conn *sql.Conn, traceID string, rows []counterRow) error {
	if len(rows) == 0 {
		return nil
	}
	if d.dialect == "postgres" {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("copy kernel counters: driver connection is %T, not pgx", dc)
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"kernel_counter_values"}, []string{"trace_id", "seq", "counters"},
				pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
					return []any{traceID, int64(rows[i].seq), rows[i].counters}, nil
				}))
			return err
		})
	}
	return insertCounterRowsSQL(rows, traceID, "INSERT OR FAIL INTO", counterRowsPerInsert, func(q string, args []any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	})
}

// insertCounterRowsSQL inserts rows, as the trace's, with multi-row
// INSERTs ("INSERT INTO" or SQLite's "INSERT OR FAIL INTO", insert) of
// per rows, each run by exec.
func insertCounterRowsSQL(rows []counterRow, traceID, insert string, per int, exec func(q string, args []any) error) error {
	row := "(?, ?, ?)"
	head := insert + " kernel_counter_values (trace_id, seq, counters) VALUES " + row
	full := head + strings.Repeat(", "+row, per-1)
	args := make([]any, 0, 3*per)
	for len(rows) > 0 {
		n := min(len(rows), per)
		q := full
		if n < per {
			q = head + strings.Repeat(", "+row, n-1)
		}
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, traceID, r.seq, r.counters)
		}
		if err := exec(q, args); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// KernelCounters returns the counters of the trace's kernels whose seq
// is in [from, to), by seq, then statistic name (in byte order): a page's
// in one read, of one row a kernel. The trace's statistic names come in
// the same statement, so they are those the kernels' counters were
// stored with.
func (d *DB) KernelCounters(ctx context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error) {
	rows, err := d.read(ctx).Raw("SELECT -1 AS seq, names AS b FROM trace_counter_stats WHERE trace_id = ? "+
		"UNION ALL SELECT seq, counters FROM kernel_counter_values WHERE trace_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
		traceID, traceID, from, to).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The kernels' counters are gathered, then counted, then decoded
	// into a list of their number: growing it as they are decoded was
	// half the time of a read.
	var (
		names []string
		arena []byte
		ks    []counterRow
		seq   int
		b     sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, err
		}
		if seq < 0 {
			if names, err = decodeStatNames(b); err != nil {
				return nil, fmt.Errorf("kernel counters of %s: %w", traceID, err)
			}
			continue
		}
		arena = append(arena, b...)
		ks = append(ks, counterRow{seq: seq, end: len(arena)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ks) > 0 && names == nil {
		return nil, fmt.Errorf("kernel counters of %s: %w: no statistic names", traceID, errCorruptCounters)
	}
	// Validated and counted, then decoded.
	n := 0
	one := make([]cascade.KernelCounter, 0, len(names)) // a kernel has at most one counter a name
	for i, k := range ks {
		if one, err = appendDecodedCounters(one[:0], traceID, k.seq, names, kernelBlob(arena, ks, i)); err != nil {
			return nil, fmt.Errorf("kernel counters of %s, kernel %d: %w", traceID, k.seq, err)
		}
		n += len(one)
	}
	cs := make([]cascade.KernelCounter, 0, n)
	for i, k := range ks {
		cs, _ = appendDecodedCounters(cs, traceID, k.seq, names, kernelBlob(arena, ks, i))
	}
	return cs, nil
}

// kernelBlob is the counters of ks[i], ks' being gathered in arena.
func kernelBlob(arena []byte, ks []counterRow, i int) []byte {
	start := 0
	if i > 0 {
		start = ks[i-1].end
	}
	return arena[start:ks[i].end]
}

// dropCounters removes the trace's kernel counters: with its kernels, they
// describe a list that is gone.
func dropCounters(tx *gorm.DB, traceID string) error {
	for _, t := range []string{"kernel_counter_values", "trace_counter_stats"} {
		if err := tx.Exec("DELETE FROM "+t+" WHERE trace_id = ?", traceID).Error; err != nil {
			return fmt.Errorf("delete kernel counters of %s: %w", traceID, err)
		}
	}
	return nil
}

// dropCountersConn is dropCounters on a connection in a transaction.
func (d *DB) dropCountersConn(ctx context.Context, conn *sql.Conn, traceID string) error {
	for _, t := range []string{"kernel_counter_values", "trace_counter_stats"} {
		if _, err := conn.ExecContext(ctx, d.sql("DELETE FROM "+t+" WHERE trace_id = ?"), traceID); err != nil {
			return fmt.Errorf("delete kernel counters of %s: %w", traceID, err)
		}
	}
	return nil
}

// moveCounters gives the kernel counters of trace from to trace to, in tx.
func moveCounters(tx *gorm.DB, from, to string) error {
	for _, t := range []string{"kernel_counter_values", "trace_counter_stats"} {
		if err := tx.Exec("UPDATE "+t+" SET trace_id = ? WHERE trace_id = ?", to, from).Error; err != nil {
			return fmt.Errorf("move kernel counters of %s to %s: %w", from, to, err)
		}
	}
	return nil
}
