package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cascade-sim/cascade"
)

// Ingest: a trace's kernel list goes into a new kernel set in short
// transactions of bulk inserts (pgcopy.go, sqlitebulk.go), and one more
// points the trace at it (kernelsets.go).

// Chunk sizes: the kernels one SQLite transaction inserts or deletes, so
// another writer waits at most about one chunk's time (about 7 ms of CPU
// for 2,048 kernels; a trace's move to ready takes a few writes, each of
// which may wait once), the rows of one multi-row INSERT, and the rows of
// one PostgreSQL COPY.
var (
	sqliteChunk   = 2048
	deleteChunk   = 4096
	rowsPerInsert = 64
	copyChunk     = 20000
)

// ReplaceKernels replaces the kernels of the trace with the given id.
func (d *DB) ReplaceKernels(ctx context.Context, traceID string, ks []cascade.Kernel) error {
	return d.ReplaceKernelsFrom(ctx, traceID, func(add func([]cascade.Kernel) error) error {
		if len(ks) == 0 {
			return nil
		}
		return add(ks)
	})
}

// ReplaceKernelsFrom replaces the kernels of the trace with those fill
// adds, batch by batch (add may change the batch; fill may reuse it once
// add returned). They go into a new kernel set in short transactions, and
// the trace moves to it in one more: readers see the old list whole until
// then, and other writers never wait for more than a chunk. An error of
// fill or add leaves the trace's kernels as they were. A trace that is
// gone by the end gets no kernels and no error.
func (d *DB) ReplaceKernelsFrom(ctx context.Context, traceID string, fill func(add func([]cascade.Kernel) error) error) error {
	w := &setWriter{d: d}
	seq := 0
	err := fill(func(ks []cascade.Kernel) error {
		for i := range ks {
			ks[i].TraceID, ks[i].Seq = traceID, seq
			seq++
		}
		return w.add(ctx, ks)
	})
	if err == nil && w.chunks == nil {
		// Less than a chunk: one transaction does it all.
		return d.replaceSmall(ctx, traceID, w.rows)
	}
	if werr := w.finish(ctx, err == nil); werr != nil {
		err = fmt.Errorf("insert kernels of %s: %w", traceID, werr)
	}
	if err == nil {
		err = d.swapKernelSet(ctx, traceID, w.set, seq)
	}
	if err != nil {
		if w.set != 0 {
			d.retireSet(context.WithoutCancel(ctx), w.set)
		}
		return err
	}
	return nil
}

// replaceSmall gives the trace a new set of rows, in one transaction;
// none, when there are no rows.
func (d *DB) replaceSmall(ctx context.Context, traceID string, rows []kernelRow) error {
	n := len(rows)
	err := d.rawTx(ctx, func(conn *sql.Conn) error {
		if d.dialect == "postgres" {
			if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7412)"); err != nil { // lockTraces
				return err
			}
		}
		var cur sql.NullInt64
		err := conn.QueryRowContext(ctx, d.sql("SELECT kernel_set_id FROM traces WHERE id = ?"), traceID).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		if cur.Valid {
			if _, err := conn.ExecContext(ctx, d.sql("UPDATE kernel_sets SET state = ? WHERE id = ?"), setRetired, cur.Int64); err != nil {
				return err
			}
		}
		var set any // NULL: no kernels
		if n > 0 {
			var id int64
			if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) + 1 FROM kernel_sets").Scan(&id); err != nil {
				return err
			}
			_, err := conn.ExecContext(ctx, d.sql("INSERT INTO kernel_sets (id, state, n, created_at) VALUES (?, ?, ?, ?)"),
				id, setCurrent, n, time.Now().UTC())
			if err != nil {
				return err
			}
			if err := d.insertKernels(ctx, conn, id, rows); err != nil {
				return err
			}
			set = id
		}
		_, err = conn.ExecContext(ctx, d.sql("UPDATE traces SET kernel_set_id = ? WHERE id = ?"), set, traceID)
		return err
	})
	if err != nil {
		return fmt.Errorf("replace kernels of %s: %w", traceID, err)
	}
	d.collectSoon()
	return nil
}

// A setWriter inserts the kernels of one set in chunks, in a goroutine
// of its own: the next chunk is read and parsed while the last one is
// written.
type setWriter struct {
	d    *DB
	set  int64
	rows []kernelRow // the chunk being filled, without their set

	chunks chan []kernelRow // full chunks to the writing goroutine
	free   chan []kernelRow // written chunks' memory, to reuse
	done   chan error       // the goroutine's first error, once chunks closed
	failed atomic.Bool      // the goroutine failed: stop adding
}

func (w *setWriter) chunkRows() int {
	if w.d.dialect == "postgres" {
		return copyChunk
	}
	return sqliteChunk
}

func (w *setWriter) add(ctx context.Context, ks []cascade.Kernel) error {
	for i := range ks {
		w.rows = append(w.rows, rowOf(&ks[i]))
		if len(w.rows) >= w.chunkRows() {
			if err := w.send(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// send hands the chunk filled so far to the writing goroutine, started
// on the first chunk.
func (w *setWriter) send(ctx context.Context) error {
	if w.chunks == nil {
		set, err := w.d.newKernelSet(ctx)
		if err != nil {
			return fmt.Errorf("new kernel set: %w", err)
		}
		w.set = set
		w.chunks, w.free, w.done = make(chan []kernelRow, 1), make(chan []kernelRow, 2), make(chan error, 1)
		go func() {
			var err error
			for c := range w.chunks {
				if err == nil {
					if err = w.write(ctx, c); err != nil {
						w.failed.Store(true)
					}
				}
				select {
				case w.free <- c[:0]:
				default:
				}
			}
			w.done <- err
		}()
	}
	if w.failed.Load() {
		return errors.New("the writer failed") // finish says why
	}
	w.chunks <- w.rows
	select {
	case w.rows = <-w.free:
	default:
		w.rows = make([]kernelRow, 0, cap(w.rows))
	}
	return nil
}

// finish writes what is left, when ok, and waits for the writes: their
// first error.
func (w *setWriter) finish(ctx context.Context, ok bool) error {
	if ok && len(w.rows) > 0 {
		if err := w.send(ctx); err != nil && w.chunks == nil {
			return err // no set
		}
	}
	if w.chunks == nil {
		return nil
	}
	close(w.chunks)
	return <-w.done
}

// write writes one chunk in a transaction of its own.
func (w *setWriter) write(ctx context.Context, rows []kernelRow) error {
	return w.d.rawTx(ctx, func(conn *sql.Conn) error { return w.d.insertKernels(ctx, conn, w.set, rows) })
}

// sql rewrites a statement's ? placeholders for PostgreSQL's driver,
// which wants $1, $2, ...
func (d *DB) sql(q string) string {
	if d.dialect != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// insertKernels inserts rows into set on conn: with a binary COPY on
// PostgreSQL (pgcopy.go); on SQLite through the driver's SQLite handle
// (sqlitebulk.go) when it can, else through database/sql.
func (d *DB) insertKernels(ctx context.Context, conn *sql.Conn, set int64, rows []kernelRow) error {
	if d.dialect == "postgres" {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("copy kernels: driver connection is %T, not pgx", dc)
			}
			_, err := c.Conn().PgConn().CopyFrom(ctx, &copyReader{set: set, rows: rows}, copyKernelsSQL)
			return err
		})
	}
	err := conn.Raw(func(dc any) error {
		r, err := rawSQLiteOf(dc)
		if err != nil {
			return err
		}
		per := rowsPerInsert
		if len(rows) < 1000 {
			per = 16 // a small list: a smaller statement is prepared faster
		}
		b := &sqliteBulk{r: r, set: set, perStmt: per}
		defer b.close()
		return b.insert(rows)
	})
	if errors.Is(err, errNoRawSQLite) {
		err = insertRows(ctx, conn, set, rows)
	}
	return err
}

// insertRows inserts through database/sql, a few rows a statement: the
// driver matches each argument to its parameter by a linear search,
// quadratic in a statement's parameters.
func insertRows(ctx context.Context, conn *sql.Conn, set int64, rows []kernelRow) error {
	const perStmt = 8
	args := make([]any, 0, perStmt*(len(kernelColumnList)-1))
	for done := 0; done < len(rows); {
		n := min(perStmt, len(rows)-done)
		args = args[:0]
		for i := done; i < done+n; i++ {
			args = rows[i].args(args)
		}
		if _, err := conn.ExecContext(ctx, insertSQL(set, n), args...); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// insertSQL is SQLite's INSERT of rows kernels into set, whose id is in
// the statement (each chunk prepares its own): one value fewer to bind a
// row. It is INSERT OR FAIL: a multi-row statement that may abort must
// keep a statement journal, a copy of every page it changes, to undo
// itself; one that fails instead leaves its rows to the transaction,
// which is rolled back whole on any error anyway. The journal was half
// an ingest's time.
func insertSQL(set int64, rows int) string {
	row := "(" + strconv.FormatInt(set, 10) + strings.Repeat(", ?", len(kernelColumnList)-1) + ")"
	return "INSERT OR FAIL INTO kernels (" + kernelColumns + ") VALUES " + row + strings.Repeat(", "+row, rows-1)
}
