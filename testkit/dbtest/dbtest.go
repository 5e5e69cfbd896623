package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit"
)

// PostgresEnv names the variable holding a PostgreSQL URL; when it is set,
// database tests run on PostgreSQL as well as on SQLite.
const PostgresEnv = "CASCADE_TEST_POSTGRES_DSN"

// DB opens a fresh, migrated SQLite database in a file under t.TempDir()
// (not :memory:, which is one database per pooled connection and has no
// WAL) and closes it when the test ends.
func DB(t testing.TB) *db.DB {
	t.Helper()
	dir := t.TempDir()
	SeedSQLite(t, dir)
	d, err := db.Open(context.Background(), db.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// migrated is a new SQLite database as db.Open leaves it once migrated,
// made by db.Open once per test process. Migrating a new file costs db.Open
// about 0.1 s of CPU, ten times that under -race (SQLite parses the schema
// again after each column a migration adds); opening a copy, a few ms.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}

// SeedSQLite writes a copy of a freshly migrated SQLite database as
// dataDir/cascade.db, where db.Open with that DataDir opens it: the
// database a new data directory gets on its first open, without the
// migration's cost. It writes nothing when dataDir does not exist or
// already has a cascade.db (a test opening a data directory again).
// db.Open itself makes the copy's original, once per test process, so it
// is always the current schema; the migrations' own tests open new files
// with db.Open.
func SeedSQLite(t testing.TB, dataDir string) {
	t.Helper()
	file := filepath.Join(dataDir, "cascade.db")
	if _, err := os.Stat(dataDir); err != nil {
		return
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	migrated.once.Do(func() {
		dir, err := os.MkdirTemp("", "cascade-dbtest-")
		if err != nil {
			migrated.err = err
			return
		}
		defer os.RemoveAll(dir)
		d, err := db.Open(context.Background(), db.Config{DataDir: dir})
		if err != nil {
			migrated.err = fmt.Errorf("migrate a new SQLite database: %w", err)
			return
		}
		if err := d.Close(); err != nil { // checkpoints the WAL into the file
			migrated.err = fmt.Errorf("close the migrated SQLite database: %w", err)
			return
		}
		migrated.data, migrated.err = os.ReadFile(filepath.Join(dir, "cascade.db"))
	})
	if migrated.err != nil {
		t.Fatal(migrated.err)
	}
	if err := os.WriteFile(file, migrated.data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// needsPostgres is why PostgreSQL variants belong to the full suite: they
// need an external service (testkit.SkipShort).
const needsPostgres = "needs PostgreSQL (" + PostgresEnv + ")"

// DatabaseURLs returns the database URLs a test should run against: ""
// (SQLite in the data directory) always, and a URL of a fresh PostgreSQL
// schema, dropped when the test ends, when PostgresEnv is set, except
// under go test -short, which talks to no external service (the test's
// log says so).
func DatabaseURLs(t testing.TB) map[string]string {
	t.Helper()
	urls := map[string]string{"sqlite": ""}
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		if testing.Short() {
			t.Log("full suite: " + needsPostgres + "; only SQLite under -short")
		} else {
			urls["postgres"] = PostgresSchema(t, dsn)
		}
	}
	return urls
}

// ForEachDB runs fn as a subtest on a fresh SQLite database and, when
// PostgresEnv is set, on a fresh PostgreSQL schema; under go test -short
// that subtest is skipped.
func ForEachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Helper()
	if testing.Short() && os.Getenv(PostgresEnv) != "" {
		t.Run("postgres", func(t *testing.T) { testkit.SkipShort(t, needsPostgres) })
	}
	for name, u := range DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if u == "" {
				SeedSQLite(t, dir)
			}
			d, err := db.Open(context.Background(), db.Config{URL: u, DataDir: dir})
			if err != nil {
				t.Fatalf("open %s: %v", name, err)
			}
			t.Cleanup(func() { d.Close() })
			fn(t, d)
		})
	}
}

// PostgresSchema creates a throwaway schema in the database at dsn and
// returns a URL whose connections use it; the schema is dropped at cleanup.
// Under go test -short it skips the test.
func PostgresSchema(t testing.TB, dsn string) string {
	t.Helper()
	testkit.SkipShort(t, needsPostgres)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "cascade_test_" + hex.EncodeToString(b)
	admin, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	if !strings.Contains(dsn, "://") { // libpq's keyword/value form
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
