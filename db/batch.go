package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cascade-sim/cascade"
)

// UpdateTraces applies many [cascade.TraceWrite]s in one write transaction, in
// order: for a bucket of a thousand traces, one commit instead of a
// thousand, with the same read-modify-write each UpdateTraceAndKernels
// does. The ids must differ. The results are in the order of ws. An error of the database
// leaves every trace as it was and is returned.
func (d *DB) UpdateTraces(ctx context.Context, ws []cascade.TraceWrite) ([]cascade.TraceWritten, error) {
	res := make([]cascade.TraceWritten, len(ws))
	if len(ws) == 0 {
		return res, nil
	}
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		if seen[w.ID] {
			return nil, fmt.Errorf("update traces: trace %s written twice", w.ID)
		}
		seen[w.ID] = true
	}
	retired := false
	err := d.rawTx(ctx, func(conn *sql.Conn) error {
		retired = false
		for i := range res {
			res[i] = cascade.TraceWritten{}
		}
		tx := d.onConn(ctx, conn)
		if err := lockTraces(tx); err != nil {
			return err
		}
		ids := make([]string, len(ws))
		for i, w := range ws {
			ids[i] = w.ID
		}
		stored, sets, err := loadTraces(tx, ids)
		if err != nil {
			return err
		}
		var (
			nextSeq, nextSet int64            // 0 until first needed
			writes           []*cascade.Trace // saved, new or not
			newSets          []kernelSet
			retire           []int64
			setOf            = map[string]int64{} // trace id -> its new set, or 0 for none
			kernels          []setRows            // of the new sets
		)
		now := tx.NowFunc()
		for i, w := range ws {
			t, found := stored[w.ID]
			if !found {
				t = cascade.Trace{ID: w.ID}
			}
			seq, created := t.Seq, t.CreatedAt
			drop, err := w.Update(&t, found)
			if errors.Is(err, cascade.ErrUnchanged) {
				res[i].Trace = t
				continue
			} else if err != nil {
				res[i] = cascade.TraceWritten{Trace: t, Err: err}
				continue
			}
			if drop || w.Kernels != nil {
				if cur := sets[w.ID]; cur != 0 {
					retire = append(retire, cur)
				}
				sets[w.ID] = 0
				setOf[w.ID] = 0
			}
			if len(w.Kernels) > 0 {
				if nextSet == 0 {
					if nextSet, err = nextSetID(tx); err != nil {
						return fmt.Errorf("next kernel set: %w", err)
					}
				}
				set := nextSet
				nextSet++
				newSets = append(newSets, kernelSet{ID: set, State: setCurrent, N: int64(len(w.Kernels)), CreatedAt: now})
				rows := make([]kernelRow, len(w.Kernels))
				for j := range w.Kernels {
					k := &w.Kernels[j]
					k.TraceID, k.Seq = w.ID, j
					rows[j] = rowOf(k)
				}
				kernels = append(kernels, setRows{set, rows})
				sets[w.ID], setOf[w.ID] = set, set
			}
			if found {
				t.Seq, t.CreatedAt = seq, created
			} else {
				if nextSeq == 0 {
					if err := tx.Model(&cascade.Trace{}).Select("COALESCE(MAX(seq), 0) + 1").Scan(&nextSeq).Error; err != nil {
						return fmt.Errorf("next trace seq: %w", err)
					}
				}
				t.Seq, t.CreatedAt = nextSeq, now
				nextSeq++
			}
			t.UpdatedAt = changedAt(now, t.UpdatedAt)
			writes = append(writes, &t)
			res[i] = cascade.TraceWritten{Trace: t, Saved: true}
		}
		if len(writes) > 0 {
			// One statement a hundred traces: new ones are inserted, the
			// others get every field but id, seq and created_at, as
			// updateTrace writes them.
			cols, err := traceUpdateColumns(tx)
			if err != nil {
				return err
			}
			if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoUpdates: clause.AssignmentColumns(cols)}).
				CreateInBatches(writes, 100).Error; err != nil {
				return fmt.Errorf("write traces: %w", err)
			}
		}
		if len(retire) > 0 {
			if err := tx.Model(&kernelSet{}).Where("id IN ?", retire).Update("state", setRetired).Error; err != nil {
				return fmt.Errorf("retire kernel sets: %w", err)
			}
			retired = true
		}
		if len(newSets) > 0 {
			if err := tx.CreateInBatches(newSets, 500).Error; err != nil {
				return fmt.Errorf("insert kernel sets: %w", err)
			}
			for _, k := range kernels {
				if err := d.insertKernels(ctx, conn, k.set, k.rows); err != nil {
					return fmt.Errorf("insert kernels: %w", err)
				}
			}
		}
		if len(setOf) > 0 {
			// One statement: kernel_set_id = CASE id WHEN ... END.
			var b strings.Builder
			var args []any
			ids := make([]string, 0, len(setOf))
			b.WriteString("UPDATE traces SET kernel_set_id = CASE id")
			for id, set := range setOf {
				var v any
				if set != 0 {
					v = set
				}
				b.WriteString(" WHEN ? THEN CAST(? AS BIGINT)")
				args = append(args, id, v)
				ids = append(ids, id)
			}
			b.WriteString(" END WHERE id IN ?")
			args = append(args, ids)
			if err := tx.Exec(b.String(), args...).Error; err != nil {
				return fmt.Errorf("point traces at their kernels: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if retired {
		d.collectSoon()
	}
	return res, nil
}

// loadTraces reads the traces with the given ids, and their kernel sets
// (0 for none), in tx.
func loadTraces(tx *gorm.DB, ids []string) (map[string]cascade.Trace, map[string]int64, error) {
	stored := make(map[string]cascade.Trace, len(ids))
	sets := make(map[string]int64, len(ids))
	const per = 500 // ids a query
	for len(ids) > 0 {
		n := min(per, len(ids))
		var ts []cascade.Trace
		if err := tx.Where("id IN ?", ids[:n]).Find(&ts).Error; err != nil {
			return nil, nil, fmt.Errorf("load traces: %w", err)
		}
		for _, t := range ts {
			stored[t.ID] = t
		}
		if len(ts) > 0 {
			var rows []struct {
				ID          string
				KernelSetID sql.NullInt64
			}
			if err := tx.Model(&cascade.Trace{}).Select("id", "kernel_set_id").Where("id IN ?", ids[:n]).Scan(&rows).Error; err != nil {
				return nil, nil, fmt.Errorf("load kernel sets: %w", err)
			}
			for _, r := range rows {
				if r.KernelSetID.Valid {
					sets[r.ID] = r.KernelSetID.Int64
				}
			}
		}
		ids = ids[n:]
	}
	return stored, sets, nil
}

// setRows are the kernels of a new set.
type setRows struct {
	set  int64
	rows []kernelRow
}

// traceUpdateColumns are the columns of traces an update writes: all
// but id, seq and created_at (see updateTrace).
func traceUpdateColumns(tx *gorm.DB) ([]string, error) {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(&cascade.Trace{}); err != nil { // cached by GORM
		return nil, err
	}
	var cols []string
	for _, f := range stmt.Schema.Fields {
		switch f.DBName {
		case "", "id", "seq", "created_at":
		default:
			cols = append(cols, f.DBName)
		}
	}
	return cols, nil
}
