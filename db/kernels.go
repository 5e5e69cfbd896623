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
	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// Kernels live in kernel sets. A trace's kernel list is the set its row
// points at (traces.kernel_set_id); a new list is written into a new set
// outside any long transaction, in chunks of short ones (SQLite) or COPYs
// (PostgreSQL), and one short transaction points the trace at it. Readers
// find the set and its rows in one statement, so they see the old list
// whole until the swap and the new one whole after it. A set no trace
// points at any more is retired and deleted in the background, a chunk
// at a time, so no delete holds SQLite's writer for long either.
//
// A set is writing while its kernels go in, current once a trace points
// at it, and retired when it is replaced, its trace deleted or its writer
// failed. Sets still writing when the database opens were left by a
// process that stopped mid-ingest, and are retired.
const (
	setWriting = "writing"
	setCurrent = "current"
	setRetired = "retired"
)

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

type kernelSet struct {
	ID        int64 `gorm:"primaryKey;autoIncrement:false"`
	State     string
	N         int64
	CreatedAt time.Time
}

func (kernelSet) TableName() string { return "kernel_sets" }

// kernelRow is a stored kernel: cascade.Kernel with its set for a trace.
type kernelRow struct {
	SetID         int64 `gorm:"primaryKey;autoIncrement:false"`
	Seq           int   `gorm:"primaryKey;autoIncrement:false"`
	KernelID      int
	Context       *string
	Name          string
	DemangledName string
	TraceFile     string
	GridX         int
	GridY         int
	GridZ         int
	BlockX        int
	BlockY        int
	BlockZ        int
	Instructions  *int64
}

func (kernelRow) TableName() string { return "kernels" }

const kernelColumns = "set_id, seq, kernel_id, context, name, demangled_name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z, instructions"

var kernelColumnList = strings.Split(kernelColumns, ", ")

// values gives the row's values after set_id, in kernelColumns order, to
// the bulk writers: integer, text, or NULL for a nil pointer.
func (r *kernelRow) values(integer func(int64), text func(string), null func()) {
	integer(int64(r.Seq))
	integer(int64(r.KernelID))
	if r.Context != nil {
		text(*r.Context)
	} else {
		null()
	}
	text(r.Name)
	text(r.DemangledName)
	text(r.TraceFile)
	integer(int64(r.GridX))
	integer(int64(r.GridY))
	integer(int64(r.GridZ))
	integer(int64(r.BlockX))
	integer(int64(r.BlockY))
	integer(int64(r.BlockZ))
	if r.Instructions != nil {
		integer(*r.Instructions)
	} else {
		null()
	}
}

// rowOf is the row of k, without its set: a chunk's rows are written
// with the set given beside them.
func rowOf(k *cascade.Kernel) kernelRow {
	return kernelRow{
		Seq: k.Seq, KernelID: k.KernelID, Context: k.Context, Name: k.Name, DemangledName: k.DemangledName,
		TraceFile: k.TraceFile, GridX: k.GridX, GridY: k.GridY, GridZ: k.GridZ,
		BlockX: k.BlockX, BlockY: k.BlockY, BlockZ: k.BlockZ, Instructions: k.Instructions,
	}
}

// args is the row's columns after set_id, in kernelColumns order, for
// database/sql.
func (r *kernelRow) args(dst []any) []any {
	var ctx, insts any
	if r.Context != nil {
		ctx = *r.Context
	}
	if r.Instructions != nil {
		insts = *r.Instructions
	}
	return append(dst, int64(r.Seq), int64(r.KernelID), ctx, r.Name, r.DemangledName, r.TraceFile,
		int64(r.GridX), int64(r.GridY), int64(r.GridZ), int64(r.BlockX), int64(r.BlockY), int64(r.BlockZ), insts)
}

// currentSet is the subquery of the trace's current kernel set id.
func (d *DB) currentSet(ctx context.Context, traceID string) *gorm.DB {
	return d.read(ctx).Model(&cascade.Trace{}).Select("kernel_set_id").Where("id = ?", traceID)
}

// Kernels returns a page of the kernels of the trace with the given id, in
// the tracer's order; with a search text, only those whose mangled or
// demangled name holds it, case-insensitively. It pages in the database: a
// trace with a million kernels costs one page, and, without a search, its
// count one probe of the set's stored count.
func (d *DB) Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	q := d.read(ctx).Model(&kernelRow{}).Where("set_id = (?)", d.currentSet(ctx, traceID))
	find := func(q *gorm.DB, n int, dst *[]cascade.Kernel) error { return scanKernels(q, traceID, n, dst) }
	if search = strings.TrimSpace(search); search != "" {
		like := "%" + escapeLike(strings.ToLower(search)) + "%"
		q = q.Where("(LOWER(name) LIKE ? ESCAPE '\\' OR LOWER(demangled_name) LIKE ? ESCAPE '\\')", like, like)
		return fetchPageWith(q, p, false, nil, find)
	}
	return fetchPageWith(q, p, false, func() (int64, error) { return d.kernelCount(ctx, traceID) }, find)
}

// Columns of the kernels table, as scanKernels knows them.
const (
	colOther = iota
	colSeq
	colKernelID
	colContext
	colName
	colDemangledName
	colTraceFile
	colGridX
	colGridY
	colGridZ
	colBlockX
	colBlockY
	colBlockZ
	colInstructions
)

var kernelColumnIndex = map[string]int{
	"seq": colSeq, "kernel_id": colKernelID, "context": colContext, "name": colName,
	"demangled_name": colDemangledName, "trace_file": colTraceFile,
	"grid_x": colGridX, "grid_y": colGridY, "grid_z": colGridZ,
	"block_x": colBlockX, "block_y": colBlockY, "block_z": colBlockZ,
	"instructions": colInstructions,
}

// scanKernels runs q, a SELECT * of at most n kernel rows, and reads them
// into *dst as kernels of traceID, by their columns' names (set_id and any
// column it does not know are skipped). It reads the drivers' values
// directly rather than through GORM's reflection, which cost a page of a
// hundred kernels some 3,000 allocations; GORM still builds and logs the
// statement.
func scanKernels(q *gorm.DB, traceID string, n int, dst *[]cascade.Kernel) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	cols := make([]int, len(names))
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i, name := range names {
		cols[i] = kernelColumnIndex[name]
		ptrs[i] = &vals[i]
	}
	ks := make([]cascade.Kernel, 0, n)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		k := cascade.Kernel{TraceID: traceID}
		for i, c := range cols {
			v := vals[i]
			switch c {
			case colSeq:
				k.Seq, err = intValue(v)
			case colKernelID:
				k.KernelID, err = intValue(v)
			case colContext:
				k.Context, err = nullString(v)
			case colName:
				k.Name, err = stringValue(v)
			case colDemangledName:
				k.DemangledName, err = stringValue(v)
			case colTraceFile:
				k.TraceFile, err = stringValue(v)
			case colGridX:
				k.GridX, err = intValue(v)
			case colGridY:
				k.GridY, err = intValue(v)
			case colGridZ:
				k.GridZ, err = intValue(v)
			case colBlockX:
				k.BlockX, err = intValue(v)
			case colBlockY:
				k.BlockY, err = intValue(v)
			case colBlockZ:
				k.BlockZ, err = intValue(v)
			case colInstructions:
				if v != nil {
					var i int64
					i, err = int64Value(v)
					k.Instructions = &i
				}
			}
			if err != nil {
				return fmt.Errorf("kernels of trace %q: column %s: %w", traceID, names[i], err)
			}
		}
		ks = append(ks, k)
	}
	*dst = ks
	return rows.Err()
}

// int64Value is an integer column's value as a driver gives it.
func int64Value(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("%T %v is not an integer", v, v)
}

func intValue(v any) (int, error) {
	i, err := int64Value(v)
	return int(i), err
}

// stringValue is a text column's value as a driver gives it.
func stringValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("%T %v is not text", v, v)
}

func nullString(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := stringValue(v)
	return &s, err
}

// kernelCount is the number of kernels of a trace, stored with its set.
func (d *DB) kernelCount(ctx context.Context, traceID string) (int64, error) {
	var n []int64
	err := d.read(ctx).Model(&kernelSet{}).Where("id = (?)", d.currentSet(ctx, traceID)).Pluck("n", &n).Error
	if err != nil || len(n) == 0 {
		return 0, err
	}
	return n[0], nil
}

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

func nextSetID(tx *gorm.DB) (int64, error) {
	var id int64
	err := tx.Model(&kernelSet{}).Select("COALESCE(MAX(id), 0) + 1").Scan(&id).Error
	return id, err
}

// newKernelSet adds a set in state writing and returns its id.
func (d *DB) newKernelSet(ctx context.Context) (int64, error) {
	var id int64
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := lockTraces(tx); err != nil {
			return err
		}
		var err error
		if id, err = nextSetID(tx); err != nil {
			return err
		}
		return tx.Create(&kernelSet{ID: id, State: setWriting, CreatedAt: tx.NowFunc()}).Error
	})
	return id, err
}

// swapKernelSet points the trace at set, which holds n kernels, and
// retires the set it pointed at. A trace that is gone retires set.
func (d *DB) swapKernelSet(ctx context.Context, traceID string, set int64, n int) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := lockTraces(tx); err != nil {
			return err
		}
		cur, found, err := traceSet(tx, traceID)
		if err != nil {
			return fmt.Errorf("load trace %s: %w", traceID, err)
		}
		if !found {
			return tx.Model(&kernelSet{}).Where("id = ?", set).Update("state", setRetired).Error
		}
		res := tx.Model(&kernelSet{}).Where("id = ? AND state = ?", set, setWriting).
			Updates(map[string]any{"state": setCurrent, "n": n})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("kernel set %d of %s was retired while it was written (another server started?)", set, traceID)
		}
		if err := retireCurrent(tx, cur); err != nil {
			return err
		}
		return tx.Model(&cascade.Trace{}).Where("id = ?", traceID).UpdateColumn("kernel_set_id", set).Error
	})
	if err != nil {
		return fmt.Errorf("swap in kernels of %s: %w", traceID, err)
	}
	d.collectSoon()
	return nil
}

// traceSet returns the trace's kernel set, nil when it has none, and
// whether there is such a trace.
func traceSet(tx *gorm.DB, traceID string) (*int64, bool, error) {
	var cur []sql.NullInt64
	if err := tx.Model(&cascade.Trace{}).Where("id = ?", traceID).Pluck("kernel_set_id", &cur).Error; err != nil {
		return nil, false, err
	}
	if len(cur) == 0 {
		return nil, false, nil
	}
	if !cur[0].Valid {
		return nil, true, nil
	}
	return &cur[0].Int64, true, nil
}

// retireCurrent retires the set a trace pointed at, if any; the caller
// points the trace elsewhere in the same transaction.
func retireCurrent(tx *gorm.DB, set *int64) error {
	if set == nil {
		return nil
	}
	return tx.Model(&kernelSet{}).Where("id = ?", *set).Update("state", setRetired).Error
}

// dropKernels leaves the trace without kernels, in tx.
func dropKernels(tx *gorm.DB, traceID string) error {
	cur, _, err := traceSet(tx, traceID)
	if err != nil || cur == nil {
		return err
	}
	if err := retireCurrent(tx, cur); err != nil {
		return err
	}
	return tx.Model(&cascade.Trace{}).Where("id = ?", traceID).UpdateColumn("kernel_set_id", nil).Error
}

// retireSet retires a set whose writer gave up, logging a failure: the
// next start retires it anyway.
func (d *DB) retireSet(ctx context.Context, set int64) {
	err := d.write(ctx, func(tx *gorm.DB) error {
		return tx.Model(&kernelSet{}).Where("id = ? AND state = ?", set, setWriting).Update("state", setRetired).Error
	})
	if err != nil {
		d.log.Error("retire kernel set", "set", set, "err", err)
		return
	}
	d.collectSoon()
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

// rawTx runs fn in a write transaction on a connection of the writer's
// pool, for what GORM would slow down: bulk inserts through the driver.
func (d *DB) rawTx(ctx context.Context, fn func(conn *sql.Conn) error) (err error) {
	sqlDB, err := d.w.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	begin := "BEGIN IMMEDIATE" // see openSQLite
	if d.dialect == "postgres" {
		begin = "BEGIN"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err = fn(conn); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	d.checkpointSoon()
	return err
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

// collectSoon wakes the collector of retired sets.
func (d *DB) collectSoon() { d.collector.Wake() }

// collectRetired is the collector's job: it deletes every retired set.
func (d *DB) collectRetired(ctx context.Context) {
	if err := d.collect(ctx); err != nil && ctx.Err() == nil {
		d.log.Error("delete retired kernel sets", "err", err)
	}
}

// collect deletes every retired set, deleteChunk kernels a transaction.
func (d *DB) collect(ctx context.Context) error {
	for {
		var sets []int64
		if err := d.w.WithContext(ctx).Model(&kernelSet{}).Where("state = ?", setRetired).Limit(16).Pluck("id", &sets).Error; err != nil {
			return err
		}
		if len(sets) == 0 {
			return nil
		}
		for _, set := range sets {
			for {
				var deleted int64
				err := d.write(ctx, func(tx *gorm.DB) error {
					res := tx.Exec("DELETE FROM kernels WHERE set_id = ? AND seq < "+
						"(SELECT MIN(seq) FROM kernels WHERE set_id = ?) + ?", set, set, deleteChunk)
					deleted = res.RowsAffected
					return res.Error
				})
				if err != nil {
					return err
				}
				if deleted == 0 {
					break
				}
			}
			err := d.write(ctx, func(tx *gorm.DB) error {
				return tx.Where("id = ? AND state = ?", set, setRetired).Delete(&kernelSet{}).Error
			})
			if err != nil {
				return err
			}
		}
	}
}

// startCollector retires the sets a stopped process left writing and
// starts deleting retired sets.
func (d *DB) startCollector() error {
	err := d.write(context.Background(), func(tx *gorm.DB) error {
		return tx.Model(&kernelSet{}).Where("state = ?", setWriting).Update("state", setRetired).Error
	})
	if err != nil {
		return fmt.Errorf("retire unfinished kernel sets: %w", err)
	}
	d.collector = startWorker(d.collectRetired)
	return nil
}

// stopCollector stops the collector and waits for it.
func (d *DB) stopCollector() { d.collector.Stop() }
