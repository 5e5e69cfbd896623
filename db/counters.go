package db

import (
	"context"
	"fmt"
	"strings"

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
	first := min(len(cs), countersPerTx)
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := dropCounters(tx, traceID); err != nil {
			return err
		}
		return d.insertCounters(tx, traceID, cs[:first])
	})
	for rest := cs[first:]; err == nil && len(rest) > 0; {
		n := min(len(rest), countersPerTx)
		err = d.write(ctx, func(tx *gorm.DB) error { return d.insertCounters(tx, traceID, rest[:n]) })
		rest = rest[n:]
	}
	return err
}

// countersPerInsert is the rows of one INSERT: on SQLite a few, as its
// driver matches each argument to its parameter by a linear search
// (quadratic in a statement's parameters: at 500 rows a statement,
// binding was half the time of correlating a run); PostgreSQL binds in
// one pass.
func (d *DB) countersPerInsert() int {
	if d.dialect == "postgres" {
		return 1000
	}
	return 16
}

// insertCounters inserts cs, as the trace's, in multi-row INSERTs of
// countersPerInsert rows.
func (d *DB) insertCounters(tx *gorm.DB, traceID string, cs []cascade.KernelCounter) error {
	per := d.countersPerInsert()
	row := "(?, ?, ?, ?, ?, ?, ?)"
	head := "INSERT INTO kernel_counters (trace_id, seq, stat, mean, min, max, count) VALUES " + row
	full := head + strings.Repeat(", "+row, per-1)
	args := make([]any, 0, 7*per)
	for len(cs) > 0 {
		n := min(len(cs), per)
		q := full
		if n < per {
			q = head + strings.Repeat(", "+row, n-1)
		}
		args = args[:0]
		for _, c := range cs[:n] {
			args = append(args, traceID, c.Seq, c.Stat, c.Mean, c.Min, c.Max, c.Count)
		}
		if err := tx.Exec(q, args...).Error; err != nil {
			return fmt.Errorf("insert kernel counters of %s: %w", traceID, err)
		}
		cs = cs[n:]
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
