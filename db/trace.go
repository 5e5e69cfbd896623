package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// fetchPage reads up to p's limit of q's rows after p's cursor, in seq
// order (newest first when desc): a range scan of an index on seq,
// however deep the page. It counts q's rows when p asks, with count when
// not nil, else with COUNT(*).
func fetchPage[T any](q *gorm.DB, p cascade.Page, desc bool, count func() (int64, error)) (cascade.PageOf[T], error) {
	return fetchPageWith(q, p, desc, count, func(q *gorm.DB, _ int, dst *[]T) error { return q.Find(dst).Error })
}

// fetchPageWith is fetchPage reading the rows with find, which is given
// the query and the most rows it returns.
func fetchPageWith[T any](q *gorm.DB, p cascade.Page, desc bool, count func() (int64, error), find func(q *gorm.DB, n int, dst *[]T) error) (cascade.PageOf[T], error) {
	var page cascade.PageOf[T]
	limit, err := p.Limit()
	if err != nil {
		return page, err
	}
	after, hasAfter, err := cascade.ParseCursor(p.After)
	if err != nil {
		return page, err
	}
	if p.Count {
		if count == nil {
			count = func() (n int64, err error) { return n, q.Count(&n).Error }
		}
		if page.Total, err = count(); err != nil {
			return page, err
		}
	}
	order, cmp := "seq", "seq > ?"
	if desc {
		order, cmp = "seq DESC", "seq < ?"
	}
	if hasAfter {
		q = q.Where(cmp, after)
	}
	if err := find(q.Order(order).Limit(limit+1), limit+1, &page.Items); err != nil {
		return page, err
	}
	if len(page.Items) > limit {
		page.Items, page.HasNext = page.Items[:limit], true
	}
	return page, nil
}

// Trace returns the trace with the given id, or a NOT_FOUND error.
func (d *DB) Trace(ctx context.Context, id string) (cascade.Trace, error) {
	var t cascade.Trace
	err := d.read(ctx).Take(&t, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", id)
	}
	return t, err
}

// TracesByID returns the traces with the given ids, in no particular
// order: an id with no trace has none, and an id given twice is read once.
// Up to cascade.MaxPageSize ids, a page's, take one query.
func (d *DB) TracesByID(ctx context.Context, ids []string) ([]cascade.Trace, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var ts []cascade.Trace
	for chunk := range slices.Chunk(ids, cascade.MaxPageSize) {
		var part []cascade.Trace
		if err := d.read(ctx).Where("id IN ?", chunk).Find(&part).Error; err != nil {
			return nil, fmt.Errorf("load traces by id: %w", err)
		}
		ts = append(ts, part...)
	}
	return ts, nil
}

// Traces returns a page of the traces matching f, newest first.
func (d *DB) Traces(ctx context.Context, f cascade.TraceFilter, p cascade.Page) (cascade.PageOf[cascade.Trace], error) {
	q := d.read(ctx).Model(&cascade.Trace{})
	if f.State != "" {
		q = q.Where("state = ?", f.State)
	}
	if f.Search != "" {
		like := "%" + escapeLike(strings.ToLower(f.Search)) + "%"
		q = q.Where("(LOWER(id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(model, '')) LIKE ? ESCAPE '\\')", like, like)
	}
	return fetchPage[cascade.Trace](q, p, true, nil)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// AllTraces returns every trace, oldest first. The scanner reconciles the
// disk against it at start.
func (d *DB) AllTraces(ctx context.Context) ([]cascade.Trace, error) {
	var ts []cascade.Trace
	err := d.read(ctx).Order("seq").Find(&ts).Error
	return ts, err
}

// SaveTrace inserts t, or updates every field of the stored trace with its
// id. It fills in t's Seq and timestamps from the committed row.
func (d *DB) SaveTrace(ctx context.Context, t *cascade.Trace) error {
	return d.write(ctx, func(tx *gorm.DB) error { return saveTrace(tx, t) })
}

func saveTrace(tx *gorm.DB, t *cascade.Trace) error {
	if err := lockTraces(tx); err != nil {
		return err
	}
	var old cascade.Trace
	err := tx.Select("seq", "created_at", "updated_at").Take(&old, "id = ?", t.ID).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		if err := tx.Model(&cascade.Trace{}).Select("COALESCE(MAX(seq), 0) + 1").Scan(&t.Seq).Error; err != nil {
			return fmt.Errorf("next trace seq: %w", err)
		}
		t.CreatedAt, t.UpdatedAt = tx.NowFunc(), tx.NowFunc()
		if err := tx.Create(t).Error; err != nil {
			return fmt.Errorf("insert trace %s: %w", t.ID, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("load trace %s: %w", t.ID, err)
	}
	t.Seq, t.CreatedAt, t.UpdatedAt = old.Seq, old.CreatedAt, old.UpdatedAt
	return updateTrace(tx, t)
}

// updateTrace writes every field of t but its id, seq and creation time
// over the stored trace with its id, which the caller knows is there (in
// tx, with lockTraces taken).
func updateTrace(tx *gorm.DB, t *cascade.Trace) error {
	t.UpdatedAt = changedAt(tx.NowFunc(), t.UpdatedAt)
	if err := tx.Select("*").Omit("id", "seq", "created_at").Where("id = ?", t.ID).UpdateColumns(t).Error; err != nil {
		return fmt.Errorf("update trace %s: %w", t.ID, err)
	}
	return nil
}

// lockTraces makes trace writes take turns on PostgreSQL, as SQLite's
// IMMEDIATE transactions already do: two first sightings of one trace must
// not both insert it, nor two new traces take the same seq. Trace writes
// are a few a second at most, so one lock costs nothing.
func lockTraces(tx *gorm.DB) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	if err := tx.Exec("SELECT pg_advisory_xact_lock(7412)").Error; err != nil {
		return fmt.Errorf("lock traces: %w", err)
	}
	return nil
}

// DeleteTrace removes the trace, its kernels (with their counters) and
// its sampling plans. Its
// runs belong to package runs, which ends and removes them (DeleteRuns).
// Deleting a trace that is not there is not an error.
func (d *DB) DeleteTrace(ctx context.Context, id string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := lockTraces(tx); err != nil {
			return err
		}
		if err := dropKernels(tx, id); err != nil {
			return fmt.Errorf("delete kernels of %s: %w", id, err)
		}
		if err := deleteSamplingPlans(tx, id); err != nil {
			return err
		}
		return tx.Where("id = ?", id).Delete(&cascade.Trace{}).Error
	})
	if err == nil {
		d.collectSoon()
	}
	return err
}

// MoveTrace gives the trace from, with its kernels, runs and sampling
// plans, the id to, and lets fn change it, in one transaction. It returns
// NOT_FOUND when there is no trace from and CONFLICT when the id to is
// taken; an error of fn leaves everything as it was and is returned.
func (d *DB) MoveTrace(ctx context.Context, from, to string, fn func(t *cascade.Trace) error) (t cascade.Trace, err error) {
	err = d.write(ctx, func(tx *gorm.DB) error {
		if err := lockTraces(tx); err != nil {
			return err
		}
		err := tx.Take(&t, "id = ?", from).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", from)
		} else if err != nil {
			return fmt.Errorf("load trace %s: %w", from, err)
		}
		var taken int64
		if err := tx.Model(&cascade.Trace{}).Where("id = ?", to).Count(&taken).Error; err != nil {
			return fmt.Errorf("look up trace %s: %w", to, err)
		}
		if taken > 0 {
			return cascade.Errorf(cascade.ECONFLICT, "trace %q exists", to)
		}
		if err := fn(&t); err != nil {
			return err
		}
		if err := tx.Model(&cascade.Trace{}).Where("id = ?", from).Update("id", to).Error; err != nil {
			return fmt.Errorf("move trace %s to %s: %w", from, to, err)
		}
		// Its kernel set goes with its row.
		if err := tx.Model(&cascade.Run{}).Where("trace_id = ?", from).Update("trace_id", to).Error; err != nil {
			return fmt.Errorf("move trace %s to %s: %w", from, to, err)
		}
		if err := tx.Model(&cascade.SamplingPlan{}).Where("trace_id = ?", from).Update("trace_id", to).Error; err != nil {
			return fmt.Errorf("move trace %s to %s: %w", from, to, err)
		}
		if err := moveCounters(tx, from, to); err != nil {
			return err
		}
		t.ID = to
		return saveTrace(tx, &t)
	})
	return t, err
}

// UpdateTrace reads the trace with the given id inside a write transaction,
// lets fn change it, and saves it: a read-modify-write no other writer can
// interleave with, so the scanner's fields and the post-processor's state
// never overwrite each other. fn gets found == false and a Trace with only
// ID set when there is no such trace; saving it inserts it. It returns the
// committed trace.
func (d *DB) UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (t cascade.Trace, saved bool, err error) {
	return d.UpdateTraceAndKernels(ctx, id, func(t *cascade.Trace, found bool) (bool, error) { return false, fn(t, found) })
}

// UpdateTraceAndKernels is [DB.UpdateTrace] for a writer whose fn may also
// delete the trace's kernels, in the same transaction, by returning
// dropKernels == true: an upload that starts over has no kernel list until
// it is ready again, and readers see the old trace with its kernels or the
// new one without.
func (d *DB) UpdateTraceAndKernels(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) (dropKernels bool, err error)) (t cascade.Trace, saved bool, err error) {
	dropped := false
	defer func() {
		if dropped && saved && err == nil {
			d.collectSoon()
		}
	}()
	err = d.write(ctx, func(tx *gorm.DB) error {
		dropped = false
		if err := lockTraces(tx); err != nil {
			return err
		}
		found := true
		err := tx.Take(&t, "id = ?", id).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			found, t = false, cascade.Trace{ID: id}
		} else if err != nil {
			return fmt.Errorf("load trace %s: %w", id, err)
		}
		seq, created := t.Seq, t.CreatedAt
		drop, err := fn(&t, found)
		if err != nil {
			return err
		}
		if drop {
			if err := dropKernels(tx, id); err != nil {
				return fmt.Errorf("delete kernels of %s: %w", id, err)
			}
			dropped = true
		}
		saved = true
		if !found {
			return saveTrace(tx, &t)
		}
		// Read above, under the same lock: no need to look it up again.
		t.Seq, t.CreatedAt = seq, created
		return updateTrace(tx, &t)
	})
	if errors.Is(err, cascade.ErrUnchanged) {
		return t, false, nil
	}
	return t, saved && err == nil, err
}

// TraceBytes sums the bytes of traces still uploading or processing
// (pending) and of the others (done), the sample excepted.
func (d *DB) TraceBytes(ctx context.Context) (pending, done int64, err error) {
	var rows []struct {
		Pending bool
		Total   int64
	}
	err = d.read(ctx).Model(&cascade.Trace{}).
		Select("state IN (?) AS pending, COALESCE(SUM(bytes), 0) AS total", []cascade.TraceState{cascade.TraceUploading, cascade.TraceProcessing}).
		Where("sample = ?", false).Group("pending").Scan(&rows).Error
	for _, r := range rows {
		if r.Pending {
			pending = r.Total
		} else {
			done = r.Total
		}
	}
	return pending, done, err
}
