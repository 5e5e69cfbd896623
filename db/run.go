package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// Run returns the run with the given id, or a NOT_FOUND error.
func (d *DB) Run(ctx context.Context, id string) (cascade.Run, error) {
	var r cascade.Run
	err := d.read(ctx).Take(&r, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return r, cascade.Errorf(cascade.ENOTFOUND, "run %q not found", id)
	}
	return r, err
}

// Runs returns a page of the runs matching f, newest first.
func (d *DB) Runs(ctx context.Context, f cascade.RunFilter, p cascade.Page) (cascade.PageOf[cascade.Run], error) {
	q := d.read(ctx).Model(&cascade.Run{})
	if f.TraceID != "" {
		q = q.Where("trace_id = ?", f.TraceID)
	}
	if f.State != "" {
		q = q.Where("state = ?", f.State)
	}
	if f.SweepID != "" {
		q = q.Where("sweep_id = ?", f.SweepID)
	}
	if f.FailureClass != "" {
		q = q.Where("failure_class = ?", f.FailureClass)
	}
	if !f.Segments {
		q = q.Where("sampled_by_id IS NULL")
	}
	return fetchPage[cascade.Run](q, p, true, nil)
}

// RunsInState returns every run in the given state, oldest first: the
// queue order.
func (d *DB) RunsInState(ctx context.Context, s cascade.RunState) ([]cascade.Run, error) {
	var rs []cascade.Run
	err := d.read(ctx).Where("state = ?", s).Order("seq").Find(&rs).Error
	return rs, err
}

// TraceRuns returns every run of the trace with the given id, oldest
// first.
func (d *DB) TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error) {
	var rs []cascade.Run
	err := d.read(ctx).Where("trace_id = ?", traceID).Order("seq").Find(&rs).Error
	return rs, err
}

// DeleteRuns removes the runs with the given ids and their kernel results.
// Ids that are not there are no error.
func (d *DB) DeleteRuns(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		if err := tx.Where("run_id IN ?", ids).Delete(&cascade.RunKernel{}).Error; err != nil {
			return fmt.Errorf("delete run kernels: %w", err)
		}
		if err := tx.Where("id IN ?", ids).Delete(&cascade.Run{}).Error; err != nil {
			return fmt.Errorf("delete runs: %w", err)
		}
		return nil
	})
}

// CreateRun inserts r, assigning its Seq and timestamps.
func (d *DB) CreateRun(ctx context.Context, r *cascade.Run) error {
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		if err := tx.Model(&cascade.Run{}).Select("COALESCE(MAX(seq), 0) + 1").Scan(&r.Seq).Error; err != nil {
			return fmt.Errorf("next run seq: %w", err)
		}
		r.CreatedAt, r.UpdatedAt = tx.NowFunc(), tx.NowFunc()
		microseconds(r)
		if err := tx.Create(r).Error; err != nil {
			return fmt.Errorf("insert run: %w", err)
		}
		return nil
	})
}

// CreateRuns inserts rs in one transaction, in order, assigning their Seq
// and timestamps: a sampled run and its segments are stored together.
func (d *DB) CreateRuns(ctx context.Context, rs []cascade.Run) error {
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		var seq int64
		if err := tx.Model(&cascade.Run{}).Select("COALESCE(MAX(seq), 0)").Scan(&seq).Error; err != nil {
			return fmt.Errorf("next run seq: %w", err)
		}
		now := tx.NowFunc()
		for i := range rs {
			seq++
			rs[i].Seq, rs[i].CreatedAt, rs[i].UpdatedAt = seq, now, now
			microseconds(&rs[i])
		}
		if len(rs) == 0 {
			return nil
		}
		if err := tx.CreateInBatches(rs, sweepInsertBatch).Error; err != nil {
			return fmt.Errorf("insert runs: %w", err)
		}
		return nil
	})
}

// microseconds keeps a run's start and end to the microsecond, as
// PostgreSQL stores them and as its createdAt and updatedAt are
// (gorm.Config.NowFunc): on SQLite they kept the nanoseconds they were
// given, and a run's times had two precisions.
func microseconds(r *cascade.Run) {
	for _, t := range []**time.Time{&r.StartedAt, &r.FinishedAt} {
		if *t != nil {
			u := (*t).Truncate(time.Microsecond)
			*t = &u
		}
	}
}

// PeakRSS is the largest peak resident memory (Figures.PeakRSSBytes)
// among the last recent runs of the config simConfig that recorded one,
// those of the trace traceID alone when it is not ""; 0 when there are
// none. The local executor sizes what a simulation of the config needs by
// it.
func (d *DB) PeakRSS(ctx context.Context, simConfig, traceID string, recent int) (int64, error) {
	q := d.read(ctx).Model(&cascade.Run{}).Where("sim_config = ? AND peak_rss_bytes > 0", simConfig)
	if traceID != "" {
		q = q.Where("trace_id = ?", traceID)
	}
	var peaks []int64
	if err := q.Order("seq DESC").Limit(max(1, recent)).Pluck("peak_rss_bytes", &peaks).Error; err != nil {
		return 0, err
	}
	var top int64
	for _, p := range peaks {
		top = max(top, p)
	}
	return top, nil
}

// Segments returns the segments of the sampled run with the given id,
// oldest (first) first; none for another run.
func (d *DB) Segments(ctx context.Context, id string) ([]cascade.Run, error) {
	var rs []cascade.Run
	err := d.read(ctx).Where("sampled_by_id = ?", id).Order("seq").Find(&rs).Error
	return rs, err
}

// UpdateRun is UpdateTrace for runs: fn changes the stored run inside a
// write transaction; returning ErrUnchanged leaves it as it was. A missing
// run is NOT_FOUND.
func (d *DB) UpdateRun(ctx context.Context, id string, fn func(r *cascade.Run) error) (r cascade.Run, saved bool, err error) {
	err = d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		err := tx.Take(&r, "id = ?", id).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return cascade.Errorf(cascade.ENOTFOUND, "run %q not found", id)
		} else if err != nil {
			return fmt.Errorf("load run %s: %w", id, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
		r.UpdatedAt = changedAt(tx.NowFunc(), r.UpdatedAt)
		microseconds(&r)
		saved = true
		return tx.Select("*").Omit("id", "seq", "created_at").Where("id = ?", id).UpdateColumns(&r).Error
	})
	if errors.Is(err, cascade.ErrUnchanged) {
		return r, false, nil
	}
	return r, saved && err == nil, err
}

// UpdateRuns is UpdateRun for many runs in one write transaction: fn
// changes each stored run of ids in turn, and returning ErrUnchanged
// leaves that one as it was. It returns the runs it saved and the ids
// that are not stored; any other error of fn rolls every change back.
// (The Slurm poller records the pending reasons of thousands of jobs with
// it: one transaction per poll, not one per run.)
func (d *DB) UpdateRuns(ctx context.Context, ids []string, fn func(r *cascade.Run) error) (saved []cascade.Run, missing []string, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	err = d.write(ctx, func(tx *gorm.DB) error {
		saved, missing = nil, nil
		if err := lockRuns(tx); err != nil {
			return err
		}
		found := make(map[string]cascade.Run, len(ids))
		for chunk := range slices.Chunk(ids, 500) {
			var rs []cascade.Run
			if err := tx.Where("id IN ?", chunk).Find(&rs).Error; err != nil {
				return fmt.Errorf("load runs: %w", err)
			}
			for _, r := range rs {
				found[r.ID] = r
			}
		}
		now := tx.NowFunc()
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				continue // an id given twice is changed once
			}
			seen[id] = true
			r, ok := found[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			switch err := fn(&r); {
			case errors.Is(err, cascade.ErrUnchanged):
				continue
			case err != nil:
				return err
			}
			r.UpdatedAt = changedAt(now, r.UpdatedAt)
			microseconds(&r)
			if err := tx.Select("*").Omit("id", "seq", "created_at").Where("id = ?", id).UpdateColumns(&r).Error; err != nil {
				return fmt.Errorf("save run %s: %w", id, err)
			}
			saved = append(saved, r)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return saved, missing, nil
}

// SaveRunKernels replaces the kernel results of a run.
func (d *DB) SaveRunKernels(ctx context.Context, runID string, ks []cascade.RunKernel) error {
	return d.AppendRunKernels(ctx, runID, 0, ks)
}

// runKernelChunk is the rows of a run's kernels one transaction inserts,
// so another writer waits at most about one chunk's time.
var runKernelChunk = 4096

// AppendRunKernels replaces the kernel results of a run from launch order
// from on: the stored rows before from stay, those from from on are
// deleted, and ks are stored as the kernels from from on (their RunID and
// Seq are set). A run's results that grow by a few kernels cost those few
// rows, not the whole list again. The rows go in with bulk inserts (COPY
// on PostgreSQL, multi-row INSERTs on SQLite), in transactions of
// runKernelChunk rows: a reader may see part of a large save, never rows
// of the old list mixed into it. A failed save leaves a prefix of the new
// list, which a save from at most its start makes whole.
func (d *DB) AppendRunKernels(ctx context.Context, runID string, from int, ks []cascade.RunKernel) error {
	if from < 0 {
		return fmt.Errorf("append kernels of run %s: negative start %d", runID, from)
	}
	for i := range ks {
		ks[i].RunID, ks[i].Seq = runID, from+i
	}
	first := true
	for len(ks) > 0 || first {
		n := min(len(ks), runKernelChunk)
		if d.dialect == "postgres" {
			n = min(len(ks), copyChunk)
		}
		err := d.rawTx(ctx, func(conn *sql.Conn) error {
			if first {
				if d.dialect == "postgres" {
					if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7413)"); err != nil { // lockRuns
						return err
					}
				}
				if _, err := conn.ExecContext(ctx, d.sql("DELETE FROM run_kernels WHERE run_id = ? AND seq >= ?"), runID, from); err != nil {
					return fmt.Errorf("delete: %w", err)
				}
			}
			return d.insertRunKernels(ctx, conn, ks[:n])
		})
		if err != nil {
			return fmt.Errorf("save kernels of run %s: %w", runID, err)
		}
		first, ks = false, ks[n:]
	}
	return nil
}

// CopyRunKernels makes the kernel results of run to a copy of those of
// run from, in the database: its rows are deleted, then from's are copied
// with INSERT ... SELECT, runKernelChunk rows a transaction, none of them
// passing through this process. Like AppendRunKernels, a reader may see
// part of the copy, and a failed copy leaves a prefix that a copy again
// makes whole.
func (d *DB) CopyRunKernels(ctx context.Context, from, to string) error {
	var last sql.NullInt64
	if err := d.read(ctx).Raw("SELECT MAX(seq) FROM run_kernels WHERE run_id = ?", from).Scan(&last).Error; err != nil {
		return fmt.Errorf("copy kernels of run %s: %w", from, err)
	}
	cols := strings.Join(runKernelColumns[1:], ", ")
	copyRows := d.sql("INSERT INTO run_kernels (run_id, " + cols + ") SELECT ?, " + cols +
		" FROM run_kernels WHERE run_id = ? AND seq >= ? AND seq < ?")
	first := true
	for lo := int64(0); first || (last.Valid && lo <= last.Int64); lo += int64(runKernelChunk) {
		err := d.rawTx(ctx, func(conn *sql.Conn) error {
			if first {
				if d.dialect == "postgres" {
					if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7413)"); err != nil { // lockRuns
						return err
					}
				}
				if _, err := conn.ExecContext(ctx, d.sql("DELETE FROM run_kernels WHERE run_id = ?"), to); err != nil {
					return fmt.Errorf("delete: %w", err)
				}
			}
			if !last.Valid {
				return nil
			}
			_, err := conn.ExecContext(ctx, copyRows, to, from, lo, lo+int64(runKernelChunk))
			return err
		})
		if err != nil {
			return fmt.Errorf("copy kernels of run %s to run %s: %w", from, to, err)
		}
		first = false
	}
	return nil
}

// runKernelColumns are the stored columns of cascade.RunKernel, in the
// order runKernelArgs gives their values.
var runKernelColumns = []string{
	"run_id", "seq", "kernel_id", "context", "name", "trace_file", "launch_uid",
	"sim_cycles", "sim_instructions", "ip_c", "truncated", "stats",
	"simulated", "projected_from",
}

func runKernelArgs(args []any, k *cascade.RunKernel) []any {
	return append(args, k.RunID, k.Seq, k.KernelID, k.Context, k.Name, k.TraceFile, k.LaunchUID,
		k.SimCycles, k.SimInstructions, k.IPC, k.Truncated, k.Stats, k.Simulated, k.ProjectedFrom)
}

// runKernelsPerInsert is the rows of one SQLite INSERT: the driver
// matches each argument to its parameter by a linear search, quadratic in
// a statement's parameters, so a few rows a statement is fastest.
const runKernelsPerInsert = 8

// insertRunKernels inserts ks on conn: with a COPY on PostgreSQL, with
// multi-row INSERTs on SQLite.
func (d *DB) insertRunKernels(ctx context.Context, conn *sql.Conn, ks []cascade.RunKernel) error {
	if len(ks) == 0 {
		return nil
	}
	if d.dialect == "postgres" {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("copy run kernels: driver connection is %T, not pgx", dc)
			}
			_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"run_kernels"}, runKernelColumns,
				pgx.CopyFromSlice(len(ks), func(i int) ([]any, error) { return runKernelArgs(nil, &ks[i]), nil }))
			return err
		})
	}
	row := "(?" + strings.Repeat(", ?", len(runKernelColumns)-1) + ")"
	head := "INSERT OR FAIL INTO run_kernels (" + strings.Join(runKernelColumns, ", ") + ") VALUES " + row
	full := head + strings.Repeat(", "+row, runKernelsPerInsert-1)
	args := make([]any, 0, runKernelsPerInsert*len(runKernelColumns))
	for len(ks) > 0 {
		n := min(len(ks), runKernelsPerInsert)
		q := full
		if n < runKernelsPerInsert {
			q = head + strings.Repeat(", "+row, n-1)
		}
		args = args[:0]
		for i := range n {
			args = runKernelArgs(args, &ks[i])
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return err
		}
		ks = ks[n:]
	}
	return nil
}

// RunKernels returns a run's kernel results in launch order.
func (d *DB) RunKernels(ctx context.Context, runID string) ([]cascade.RunKernel, error) {
	var ks []cascade.RunKernel
	err := d.read(ctx).Where("run_id = ?", runID).Order("seq").Find(&ks).Error
	return ks, err
}

// RunKernelPage returns a page of a run's kernel results in launch order:
// those after the kernel whose cursor (cascade.Cursor of its Seq) is
// p.After. It reads one range of the primary key (run_id, seq), so a page
// of a run of a million kernels costs what a page of a small one does;
// its count, when asked for, counts the run's kernels.
func (d *DB) RunKernelPage(ctx context.Context, runID string, p cascade.Page) (cascade.PageOf[cascade.RunKernel], error) {
	q := d.read(ctx).Model(&cascade.RunKernel{}).Where("run_id = ?", runID)
	return fetchPage[cascade.RunKernel](q, p, false, nil)
}

// lockRuns makes run writes take turns on PostgreSQL, as lockTraces does.
func lockRuns(tx *gorm.DB) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	if err := tx.Exec("SELECT pg_advisory_xact_lock(7413)").Error; err != nil {
		return fmt.Errorf("lock runs: %w", err)
	}
	return nil
}

// SetRunKernelStats sets the statistics of stored kernels of a run, each
// of ks by its Seq, to its Stats, in one transaction; the kernels' other
// fields are left as stored.
func (d *DB) SetRunKernelStats(ctx context.Context, runID string, ks []cascade.RunKernel) error {
	if len(ks) == 0 {
		return nil
	}
	err := d.rawTx(ctx, func(conn *sql.Conn) error {
		st, err := conn.PrepareContext(ctx, d.sql("UPDATE run_kernels SET stats = ? WHERE run_id = ? AND seq = ?"))
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range ks {
			if _, err := st.ExecContext(ctx, k.Stats, runID, k.Seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set kernel statistics of run %s: %w", runID, err)
	}
	return nil
}
