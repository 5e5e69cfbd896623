package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

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

// kernelSet is a row of kernel_sets: N is the count of its kernels,
// stored when it becomes current.
type kernelSet struct {
	ID        int64 `gorm:"primaryKey;autoIncrement:false"`
	State     string
	N         int64
	CreatedAt time.Time
}

func (kernelSet) TableName() string { return "kernel_sets" }

// nextSetID is the id of a new set: one above the largest.
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
	if err := dropCounters(tx, traceID); err != nil {
		return err
	}
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
