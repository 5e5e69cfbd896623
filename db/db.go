package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// SQLite allows one writer at a time; a deferred transaction that tries to
// upgrade to a write lock while another holds it fails with SQLITE_BUSY even
// in WAL mode and even with a busy timeout. So all writes go through one
// connection whose transactions begin IMMEDIATE, and reads use a separate
// pool that WAL lets run beside the writer.
const (
	sqliteBusyTimeout = 10 * time.Second
	maxReadConns      = 8
	maxPostgresConns  = 16
)

// DB is an open database. It is safe for concurrent use.
type DB struct {
	w, r    *gorm.DB // writer and reader; the same pool on PostgreSQL
	dialect string   // "sqlite" or "postgres"
	log     *slog.Logger

	// The SQLite checkpointer (checkpoint.go): its connection and worker.
	ckpt       *sql.DB
	ckptWorker *worker

	// The collector of retired kernel sets (kernelsets.go).
	collector *worker

	writes atomic.Int64 // write transactions begun

	// The session that holds an Exclusive PostgreSQL database (exclusive.go).
	lockDB   *sql.DB
	lockConn *sql.Conn
	// The flock that holds an Exclusive SQLite database.
	lockFile *os.File
}

// Config says which database to open.
type Config struct {
	// URL is a postgres:// (or postgresql://) URL, or a libpq keyword/value
	// string ("host=db user=cascade dbname=cascade"), for PostgreSQL; empty,
	// or a sqlite:// or file path, for SQLite.
	URL string
	// DataDir holds the SQLite file cascade.db when URL is empty.
	DataDir string
	Logger  *slog.Logger
	// Exclusive holds the database (a PostgreSQL schema, an SQLite file)
	// for this DB alone while it is open: an Open of one another server
	// holds fails with ErrInUse (see exclusive.go). A server opens its
	// database so.
	Exclusive bool
}

// IsPostgres reports whether a database URL names PostgreSQL: a
// postgres:// or postgresql:// URL, or a libpq keyword/value string, each
// of its space-separated fields a keyword=value with a keyword libpq
// knows. Anything else is a SQLite path (or sqlite:// URL).
func IsPostgres(u string) bool {
	if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		return true
	}
	fields := strings.Fields(u)
	for _, f := range fields {
		k, _, ok := strings.Cut(f, "=")
		if !ok || !libpqKeywords[k] {
			return false
		}
	}
	return len(fields) > 0
}

// libpqKeywords are the keywords of libpq's connection strings that pgx
// reads (any other keyword is a run-time parameter, such as search_path).
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "connect_timeout": true, "sslmode": true, "sslrootcert": true, "sslcert": true,
	"sslkey": true, "sslpassword": true, "application_name": true, "target_session_attrs": true,
	"service": true, "search_path": true, "options": true,
}

// Open opens the database, migrates its schema to the newest version and
// returns it. A failed open or migration is returned, never logged past.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &DB{log: log.With("component", "db")}
	gcfg := &gorm.Config{
		Logger:         sqlLogger{d.log},
		TranslateError: true,
		// Microseconds, which PostgreSQL stores: a row's UpdatedAt in the
		// events it is published in is then the one a query reads back,
		// and two changes a microsecond apart stay in order (changedAt).
		NowFunc: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
	}
	var err error
	switch {
	case IsPostgres(cfg.URL):
		d.dialect = "postgres"
		d.w, err = gorm.Open(postgres.Open(cfg.URL), gcfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB, err := d.w.DB()
		if err != nil {
			return nil, err
		}
		sqlDB.SetMaxOpenConns(maxPostgresConns)
		d.r = d.w
		if cfg.Exclusive {
			if err := d.holdPostgres(ctx, cfg.URL); err != nil {
				d.Close()
				return nil, err
			}
		}
	default:
		d.dialect = "sqlite"
		path := strings.TrimPrefix(cfg.URL, "sqlite://")
		if path == "" {
			path = filepath.Join(cfg.DataDir, "cascade.db")
		}
		// The URI needs an absolute path: file://rel/x.db would name a host.
		if path, err = filepath.Abs(path); err != nil {
			return nil, fmt.Errorf("database path: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
		if cfg.Exclusive {
			if err := d.holdSQLite(path); err != nil {
				return nil, err
			}
		}
		if err := d.openSQLite(path, gcfg); err != nil {
			d.release()
			return nil, err
		}
	}
	if err := d.migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if d.r != d.w {
		// A read connection opened before a migration that added a column
		// describes the table by its old columns on its first SELECT *
		// (the driver reads them before SQLite re-prepares): read on fresh
		// connections only.
		rdb, err := d.r.DB()
		if err != nil {
			d.Close()
			return nil, err
		}
		rdb.SetMaxIdleConns(0)
		rdb.SetMaxIdleConns(readConns())
	}
	d.startCheckpointer()
	if err := d.startCollector(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *DB) openSQLite(path string, gcfg *gorm.Config) error {
	u := url.URL{Scheme: "file", Path: path}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	wq := cloneValues(q)
	wq.Set("_txlock", "immediate")
	wq.Add("_pragma", "wal_autocheckpoint(0)") // see checkpoint.go
	u.RawQuery = wq.Encode()
	var err error
	if d.w, err = gorm.Open(sqlite.Open(u.String()), gcfg); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	wdb, err := d.w.DB()
	if err != nil {
		return err
	}
	wdb.SetMaxOpenConns(1)
	// Open the writer first: it creates the file and switches it to WAL,
	// which the read-only pool cannot do.
	if err := wdb.Ping(); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	rq := cloneValues(q)
	rq.Add("_pragma", "query_only(1)")
	u.RawQuery = rq.Encode()
	if d.r, err = gorm.Open(sqlite.Open(u.String()), gcfg); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	rdb, err := d.r.DB()
	if err != nil {
		return err
	}
	rdb.SetMaxOpenConns(readConns())
	cq := cloneValues(q)
	u.RawQuery = cq.Encode()
	if d.ckpt, err = sql.Open("sqlite", u.String()); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	d.ckpt.SetMaxOpenConns(1)
	return nil
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// LevelSQL is the log level of each SQL statement the database runs,
// below Debug so only a logger asking for it gets them (tests counting
// queries, someone chasing a slow page).
const LevelSQL = slog.LevelDebug - 4

// sqlLogger logs each statement GORM runs at LevelSQL, with its rows, time
// and error.
type sqlLogger struct{ log *slog.Logger }

func (l sqlLogger) LogMode(logger.LogLevel) logger.Interface { return l }
func (sqlLogger) Info(context.Context, string, ...any)       {}
func (sqlLogger) Warn(context.Context, string, ...any)       {}
func (sqlLogger) Error(context.Context, string, ...any)      {}

func (l sqlLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if !l.log.Enabled(ctx, LevelSQL) {
		return
	}
	sql, rows := fc()
	attrs := []any{"sql", sql, "rows", rows, "took", time.Since(begin)}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	l.log.Log(ctx, LevelSQL, "sql", attrs...)
}

// readConns is the size of SQLite's read pool.
func readConns() int { return max(2, min(maxReadConns, runtime.NumCPU()*2)) }

// Dialect is "sqlite" or "postgres".
func (d *DB) Dialect() string { return d.dialect }

// Close closes every connection. On SQLite it checkpoints the WAL first so
// the database file alone is complete.
func (d *DB) Close() error {
	d.stopCollector()
	d.stopCheckpointer()
	var errs []error
	if d.dialect == "sqlite" && d.w != nil {
		if err := d.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
	}
	for _, g := range []*gorm.DB{d.r, d.w} {
		if g == nil {
			continue
		}
		if sqlDB, err := g.DB(); err == nil {
			errs = append(errs, sqlDB.Close())
		}
		if d.r == d.w {
			break
		}
	}
	errs = append(errs, d.release())
	return errors.Join(errs...)
}

// WriteTransactions is how many write transactions the DB has begun
// since it was opened through its common write path (every write of runs
// and sweeps; not migrations, bulk kernel loads or UpdateTraces): the
// database load a piece of work causes, for tests and benchmarks.
func (d *DB) WriteTransactions() int64 { return d.writes.Load() }

// changedAt is the UpdatedAt of a row changed at now that was last changed
// at prev: now, or a microsecond after prev when the clock has not passed
// it (it was stepped back). A row's UpdatedAt so never goes back, and a
// client that keeps the newer of two copies of a row by it (the web UI,
// between a query's answer and the events that raced it) keeps the right
// one.
func changedAt(now, prev time.Time) time.Time {
	if now.After(prev) {
		return now
	}
	return prev.Add(time.Microsecond)
}

// read returns a context-bound handle for queries.
func (d *DB) read(ctx context.Context) *gorm.DB { return d.r.WithContext(ctx) }
