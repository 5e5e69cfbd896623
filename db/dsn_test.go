package db_test

import (
	"testing"

	"github.com/cascade-sim/cascade/db"
)

// TestIsPostgres: libpq's keyword/value strings name PostgreSQL as its
// URLs do; a path, even one with '=' in it, is SQLite's.
func TestIsPostgres(t *testing.T) {
	for u, want := range map[string]bool{
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable":  true,
		"postgresql://db/cascade":                                  true,
		"host=127.0.0.1 user=postgres dbname=test sslmode=disable": true,
		"dbname=cascade":                 true,
		"":                               false,
		"cascade.db":                     false,
		"sqlite:///var/lib/cascade.db":   false,
		"./data/run=3.db":                false,
		"host=db user=me my file.db":     false,
		"/tmp/host=127.0.0.1/cascade.db": false,
	} {
		if got := db.IsPostgres(u); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", u, got, want)
		}
	}
}
