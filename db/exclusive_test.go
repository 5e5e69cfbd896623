package db_test

import (
	"context"
	"errors"
	"os"
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
	ctx := context.Background()
	url := dbtest.PostgresSchema(t, dsn)
	open := func(u string) (*db.DB, error) {
		return db.Open(ctx, db.Config{URL: u, Exclusive: true})
	}
	first, err := open(url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = open(url)
	if !errors.Is(err, db.ErrInUse) || !strings.Contains(err.Error(), "held by the session of PostgreSQL backend pid") {
		t.Fatalf("second open: %v, want ErrInUse naming the holder", err)
	}
	t.Log(err)
	// The first still works, and a tool's non-exclusive open is let in.
	if _, err := first.TracesByID(ctx, []string{"x"}); err != nil {
		t.Fatalf("the first after the refusal: %v", err)
	}
	tool, err := db.Open(ctx, db.Config{URL: url})
	if err != nil {
		t.Fatalf("non-exclusive open: %v", err)
	}
	tool.Close()
	other, err := open(dbtest.PostgresSchema(t, dsn))
	if err != nil {
		t.Fatalf("another schema: %v", err)
	}
	other.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := open(url)
	if err != nil {
		t.Fatalf("open after the first closed: %v", err)
	}
	again.Close()
}
