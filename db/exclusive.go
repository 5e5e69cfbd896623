package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cascade-sim/cascade/internal/lockfile"
)

// ErrInUse is the error of an Exclusive Open of a database (a PostgreSQL
// schema, an SQLite file) another server holds.
var ErrInUse = errors.New("the database is in use by another Cascade server")

// One server a database: a second one would take the first one's traces
// and runs for its own, and remove every trace its bucket does not hold.
// On PostgreSQL an Exclusive Open holds a session advisory lock, keyed
// by the schema, on a connection of its own for as long as the DB is
// open; PostgreSQL releases it when that session ends, a killed server's
// too. On SQLite it holds an flock on <database>.lock beside the file
// (holdSQLite): the file may lie outside the server's data directory
// (CASCADE_DATABASE_URL=sqlite://...), which the server locks too.

// lockKey is the advisory lock of a schema: its name hashed, so that
// servers on other schemas of one database (as the tests run) do not
// contend.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("cascade:" + schema))
	return int64(h.Sum64())
}

// holdPostgres takes the schema's advisory lock on a connection of its
// own, or says who holds it.
func (d *DB) holdPostgres(ctx context.Context, url string) error {
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("lock the database: %w", err)
	}
	ldb := stdlib.OpenDB(*pc)
	ldb.SetMaxOpenConns(1)
	conn, err := ldb.Conn(ctx)
	if err != nil {
		ldb.Close()
		return fmt.Errorf("lock the database: %w", err)
	}
	var schema, database string
	var got bool
	err = conn.QueryRowContext(ctx, "SELECT current_schema(), current_database()").Scan(&schema, &database)
	// Wait a moment for a holder that is going: the session of a server
	// that just closed its database ends a little after it closed it.
	for deadline := time.Now().Add(lockfile.Wait); err == nil; time.Sleep(20 * time.Millisecond) {
		err = conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", lockKey(schema)).Scan(&got)
		if got || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !got {
		var holder string
		if err == nil {
			holder = lockHolder(ctx, conn, lockKey(schema))
		}
		conn.Close()
		ldb.Close()
		if err != nil {
			return fmt.Errorf("lock the database: %w", err)
		}
		return fmt.Errorf("%w (schema %q of database %q; its lock is held by %s): stop that server, or give this one another database or schema (CASCADE_DATABASE_URL)", ErrInUse, schema, database, holder)
	}
	d.lockConn, d.lockDB = conn, ldb
	return nil
}

// lockHolder names the session that holds the advisory lock key: its
// client's address and its backend's pid.
func lockHolder(ctx context.Context, conn *sql.Conn, key int64) string {
	var pid int
	var addr sql.NullString
	// A bigint key is stored as classid (high 32 bits) and objid (low).
	err := conn.QueryRowContext(ctx, `SELECT a.pid, host(a.client_addr) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.classid::bigint = $1 AND l.objid::bigint = $2 LIMIT 1`,
		uint32(uint64(key)>>32), uint32(uint64(key))).Scan(&pid, &addr)
	if err != nil {
		return "another session"
	}
	who := fmt.Sprintf("the session of PostgreSQL backend pid %d", pid)
	if addr.Valid {
		who += " from " + addr.String
	} else {
		who += " over a local socket"
	}
	return who
}

// release ends the session that holds the lock.
func (d *DB) release() error {
	if d.lockFile != nil {
		d.lockFile.Close()
	}
	if d.lockDB == nil {
		return nil
	}
	d.lockConn.Close()
	return d.lockDB.Close()
}

// holdSQLite takes an exclusive flock on path's lock file, beside the
// database, and writes this process's pid in it, or says who holds it.
// The kernel releases it when the process ends, a killed one's too. The
// database file itself is not flocked: SQLite's own locks on it are
// fcntl locks, which NFS emulates flock with.
func (d *DB) holdSQLite(path string) error {
	lock := path + ".lock"
	f, who, err := lockfile.Hold(lock, fmt.Sprintf("pid %d", os.Getpid()))
	switch {
	case errors.Is(err, lockfile.ErrHeld):
		if who != "" {
			who = " by " + who
		}
		return fmt.Errorf("%w (%s; its lock %s is held%s): stop that server, or give this one another database (CASCADE_DATABASE_URL)", ErrInUse, path, lock, who)
	case err != nil:
		return fmt.Errorf("lock the database: %w", err)
	}
	d.lockFile = f
	return nil
}
