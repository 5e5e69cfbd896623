package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
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
	d, err := db.Open(context.Background(), db.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
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
			d, err := db.Open(context.Background(), db.Config{URL: u, DataDir: t.TempDir()})
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
