package db_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade/db"
)

// TestOpenRelativeSQLitePath: a relative data directory or sqlite:// path
// opens the file under the working directory (a file:// URI built from a
// relative path named a host and failed with "out of memory").
func TestOpenRelativeSQLitePath(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	for _, c := range []struct {
		name string
		cfg  db.Config
		file string
	}{
		{"DataDir", db.Config{DataDir: "cascade-data"}, "cascade-data/cascade.db"},
		{"DotDataDir", db.Config{DataDir: "./dot/data"}, "dot/data/cascade.db"},
		{"SQLiteURL", db.Config{URL: "sqlite://state/cascade.db"}, "state/cascade.db"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := db.Open(context.Background(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(wd, filepath.FromSlash(c.file))); err != nil {
				t.Fatalf("database not where the relative path says: %v", err)
			}
		})
	}
}
