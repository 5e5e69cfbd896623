package db_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestExclusivePostgres: a second server's Open of a PostgreSQL schema
// one server holds fails, saying who holds it, and leaves the first
// alone; once the first closes, it opens. Another schema of the same
// database is another server's to hold.
func TestExclusivePostgres(t *testing.T) {
	testkit.SkipShort(t, "needs PostgreSQL ("+dbtest.PostgresEnv+")")
	dsn := os.Getenv(dbtest.PostgresEnv)
	if dsn == "" {
		t.Skip(dbtest.PostgresEnv + " is not set")
	}
	url := dbtest.PostgresSchema(t, dsn)
	open := func(u string) (*db.DB, error) {
		return db.Open(context.Background(), db.Config{URL: u, Exclusive: true})
	}
	heldAlone(t, url, func() (*db.DB, error) { return open(url) }, "held by the session of PostgreSQL backend pid", func() {
		other, err := open(dbtest.PostgresSchema(t, dsn))
		if err != nil {
			t.Fatalf("another schema: %v", err)
		}
		other.Close()
	})
}

// TestExclusiveSQLite: an SQLite file outside the data directory
// (CASCADE_DATABASE_URL=sqlite://...) is held as a PostgreSQL schema is:
// two servers of other data directories on one file would each remove
// the traces the other's bucket holds.
func TestExclusiveSQLite(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "shared", "cascade.db")
	open := func() (*db.DB, error) {
		return db.Open(context.Background(), db.Config{URL: url, DataDir: t.TempDir(), Exclusive: true})
	}
	heldAlone(t, url, open, fmt.Sprintf("cascade.db.lock is held by pid %d", os.Getpid()), func() {})
}

// heldAlone opens the database url exclusively twice and wants the second
// refused with ErrInUse saying holder; the first still works, a tool's
// non-exclusive open is let in, and so is whatever also tries; once the
// first closes, open succeeds again.
func heldAlone(t *testing.T, url string, open func() (*db.DB, error), holder string, also func()) {
	t.Helper()
	ctx := context.Background()
	first, err := open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = open()
	if !errors.Is(err, db.ErrInUse) || !strings.Contains(err.Error(), holder) {
		t.Fatalf("second open: %v, want ErrInUse saying %q", err, holder)
	}
	t.Log(err)
	if _, err := first.TracesByID(ctx, []string{"x"}); err != nil {
		t.Fatalf("the first after the refusal: %v", err)
	}
	tool, err := db.Open(ctx, db.Config{URL: url})
	if err != nil {
		t.Fatalf("non-exclusive open: %v", err)
	}
	tool.Close()
	also()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := open()
	if err != nil {
		t.Fatalf("open after the first closed: %v", err)
	}
	again.Close()
}
