package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// sweepInsertBatch is how many runs one INSERT of CreateSweep holds: 25
// runs of some 25 columns each stay far below SQLite's and PostgreSQL's
// limits on bound parameters, and a 3,600-run sweep is 144 statements.
const sweepInsertBatch = 25

// CreateSweep inserts s and its runs in one write transaction, assigning
// their Seqs (the runs' in the order given, after every run there is)
// and timestamps. Its runs are those that are not segments of a sampled
// run (a sampled sweep stores its cells' segments with it): their SweepID
// is set, and RunCount counts them. Either all of them are stored or none
// is.
func (d *DB) CreateSweep(ctx context.Context, s *cascade.Sweep, runs []cascade.Run) error {
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		if err := tx.Model(&cascade.Sweep{}).Select("COALESCE(MAX(seq), 0) + 1").Scan(&s.Seq).Error; err != nil {
			return fmt.Errorf("next sweep seq: %w", err)
		}
		var seq int64
		if err := tx.Model(&cascade.Run{}).Select("COALESCE(MAX(seq), 0)").Scan(&seq).Error; err != nil {
			return fmt.Errorf("next run seq: %w", err)
		}
		now := tx.NowFunc()
		s.CreatedAt, s.RunCount = now, 0
		for i := range runs {
			seq++
			runs[i].Seq = seq
			runs[i].CreatedAt, runs[i].UpdatedAt = now, now
			if runs[i].SampledByID == nil {
				runs[i].SweepID = &s.ID
				s.RunCount++
			}
		}
		if err := tx.Create(s).Error; err != nil {
			return fmt.Errorf("insert sweep: %w", err)
		}
		if len(runs) == 0 {
			return nil
		}
		if err := tx.CreateInBatches(runs, sweepInsertBatch).Error; err != nil {
			return fmt.Errorf("insert runs: %w", err)
		}
		return nil
	})
}

// Sweep returns the sweep with the given id, or a NOT_FOUND error.
func (d *DB) Sweep(ctx context.Context, id string) (cascade.Sweep, error) {
	var s cascade.Sweep
	err := d.read(ctx).Take(&s, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s, cascade.Errorf(cascade.ENOTFOUND, "sweep %q not found", id)
	}
	return s, err
}

// Sweeps returns a page of sweeps, newest first.
func (d *DB) Sweeps(ctx context.Context, p cascade.Page) (cascade.PageOf[cascade.Sweep], error) {
	return fetchPage[cascade.Sweep](d.read(ctx).Model(&cascade.Sweep{}), p, true, nil)
}

// SweepProgress counts the runs of a sweep by state, and stamps the counts
// with the latest UpdatedAt of its runs, read first: two indexed queries.
func (d *DB) SweepProgress(ctx context.Context, id string) (cascade.SweepProgress, error) {
	var rows []struct {
		State string
		N     int
	}
	var p cascade.SweepProgress
	var latest []time.Time
	err := d.read(ctx).Model(&cascade.Run{}).Where("sweep_id = ?", id).
		Order("updated_at DESC").Limit(1).Pluck("updated_at", &latest).Error
	if err != nil {
		return p, err
	}
	if len(latest) > 0 {
		p.UpdatedAt = &latest[0]
	}
	err = d.read(ctx).Model(&cascade.Run{}).Select("state, COUNT(*) AS n").
		Where("sweep_id = ?", id).Group("state").Scan(&rows).Error
	if err != nil {
		return p, err
	}
	for _, r := range rows {
		p.Count(cascade.RunState(r.State), r.N)
	}
	return p, nil
}

// SweepRuns returns the runs of a sweep in launch order, those in one of
// states only when states are given.
func (d *DB) SweepRuns(ctx context.Context, id string, states ...cascade.RunState) ([]cascade.Run, error) {
	var rs []cascade.Run
	q := d.read(ctx).Where("sweep_id = ?", id)
	if len(states) > 0 {
		q = q.Where("state IN ?", states)
	}
	err := q.Order("seq").Find(&rs).Error
	return rs, err
}

// CancelQueuedSweepRuns cancels, in one write transaction, the runs of a
// sweep that are queued and not yet given to Slurm (no job id), adding
// history to each, and returns them as stored: CANCELLED, of failure
// class CANCELLED, as every cancelled run is.
func (d *DB) CancelQueuedSweepRuns(ctx context.Context, id, history string) ([]cascade.Run, error) {
	var rs []cascade.Run
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := lockRuns(tx); err != nil {
			return err
		}
		rs = nil
		err := tx.Where("sweep_id = ? AND state = ? AND slurm_job_id IS NULL", id, cascade.RunQueued).Order("seq").Find(&rs).Error
		if err != nil {
			return fmt.Errorf("load queued runs of sweep %s: %w", id, err)
		}
		now := tx.NowFunc()
		for i := range rs {
			r := &rs[i]
			r.State, r.FinishedAt, r.UpdatedAt = cascade.RunCancelled, &now, changedAt(now, r.UpdatedAt)
			r.FailureClass = cascade.FailureCancelled
			r.History = append(r.History, history)
			err := tx.Model(&cascade.Run{}).Where("id = ?", r.ID).
				Select("state", "finished_at", "updated_at", "history", "failure_class").UpdateColumns(r).Error
			if err != nil {
				return fmt.Errorf("cancel run %s: %w", r.ID, err)
			}
		}
		return nil
	})
	return rs, err
}
