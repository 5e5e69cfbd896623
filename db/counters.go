package db

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// countersPerTx is how many counters one transaction inserts: other
// writers wait for no more than that.
const countersPerTx = 5000

// ReplaceKernelCounters replaces the hardware counters of the trace's
// kernels with cs (none when cs is empty): the old ones go in one
// transaction, the new ones are inserted countersPerTx at a time, so a
// million kernels' counters never hold the writer long. The post-processor
// calls it before the trace becomes ready, so readers of a ready trace see
// them whole.
func (d *DB) ReplaceKernelCounters(ctx context.Context, traceID string, cs []cascade.KernelCounter) error {
	for i := range cs {
		cs[i].TraceID = traceID
	}
	first := min(len(cs), countersPerTx)
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := dropCounters(tx, traceID); err != nil {
			return err
		}
		return insertCounters(tx, traceID, cs[:first])
	})
	for rest := cs[first:]; err == nil && len(rest) > 0; {
		n := min(len(rest), countersPerTx)
		err = d.write(ctx, func(tx *gorm.DB) error { return insertCounters(tx, traceID, rest[:n]) })
		rest = rest[n:]
	}
	return err
}

func insertCounters(tx *gorm.DB, traceID string, cs []cascade.KernelCounter) error {
	if len(cs) == 0 {
		return nil
	}
	if err := tx.CreateInBatches(cs, 500).Error; err != nil {
		return fmt.Errorf("insert kernel counters of %s: %w", traceID, err)
	}
	return nil
}

// KernelCounters returns the counters of the trace's kernels whose seq
// is in [from, to), by seq, then statistic name: a page's in one read.
func (d *DB) KernelCounters(ctx context.Context, traceID string, from, to int) ([]cascade.KernelCounter, error) {
	var cs []cascade.KernelCounter
	err := d.read(ctx).Where("trace_id = ? AND seq >= ? AND seq < ?", traceID, from, to).Order("seq, stat").Find(&cs).Error
	return cs, err
}

// dropCounters removes the trace's kernel counters: with its kernels, they
// describe a list that is gone.
func dropCounters(tx *gorm.DB, traceID string) error {
	if err := tx.Where("trace_id = ?", traceID).Delete(&cascade.KernelCounter{}).Error; err != nil {
		return fmt.Errorf("delete kernel counters of %s: %w", traceID, err)
	}
	return nil
}
