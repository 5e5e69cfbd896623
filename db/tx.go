package db

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"gorm.io/gorm"
)

// Write transactions: every write of the database runs in one rawTx
// holds on a connection of the writer's pool.

// write runs fn in one write transaction, on the writer's connection as
// rawTx holds it (see there for why not GORM's Transaction).
func (d *DB) write(ctx context.Context, fn func(tx *gorm.DB) error) error {
	d.writes.Add(1)
	return d.rawTx(ctx, func(conn *sql.Conn) error { return fn(d.onConn(ctx, conn)) })
}

// onConn is a GORM handle whose statements run on conn, inside the
// transaction rawTx began there.
func (d *DB) onConn(ctx context.Context, conn *sql.Conn) *gorm.DB {
	tx := d.w.Session(&gorm.Session{NewDB: true, SkipDefaultTransaction: true, Context: ctx})
	tx.Statement.ConnPool = conn
	return tx
}

// rawTx runs fn in a write transaction on a connection of the writer's
// pool: every write's (write, through GORM on that connection), and the
// bulk inserts that go through the driver itself.
//
// The SQLite driver skips a statement whose context is already done and
// reports it done (glebarez/go-sqlite's exec loop, still so in its newest
// release). So BEGIN, COMMIT and ROLLBACK never take ctx: a skipped COMMIT
// left the connection in its transaction, back in the pool, where every
// later write failed. A statement of fn may have been skipped so too:
// when ctx is done by the end of fn, nothing is committed.
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
	always := context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(always, begin); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			d.rollback(always, conn)
		}
	}()
	if err = fn(conn); err != nil {
		return err
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	_, err = conn.ExecContext(always, "COMMIT")
	d.checkpointSoon()
	return err
}

// rollback ends conn's transaction after an error. A connection it cannot
// show to be out of its transaction is closed rather than put back in the
// pool: the driver's interrupt for a statement canceled earlier can land
// on the ROLLBACK and stop it.
func (d *DB) rollback(ctx context.Context, conn *sql.Conn) {
	_, rbErr := conn.ExecContext(ctx, "ROLLBACK")
	conn.Raw(func(dc any) error {
		if d.dialect != "sqlite" {
			if rbErr != nil {
				return driver.ErrBadConn
			}
			return nil
		}
		if r, err := rawSQLiteOf(dc); err != nil || !r.autocommit() {
			return driver.ErrBadConn
		}
		return nil
	})
}
