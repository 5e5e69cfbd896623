package db_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit"
)

// TestWALCheckpointedInBackground: on SQLite, what is written reaches the
// database file without anyone asking, well before the WAL holds 1,000
// pages (where the write connection's own checkpoint, switched off,
// would once have run inside a COMMIT and kept every other writer
// waiting). The file grows only when a checkpoint copies pages into it.
func TestWALCheckpointedInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := db.Open(ctx, db.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	file := filepath.Join(dir, "cascade.db")
	size := func() int64 {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	testkit.Eventually(t, 10*time.Second, "the migrations checkpointed", func() bool { return size() > 0 })
	before := size()
	db.SetChunkRows(t, 500)
	if err := d.SaveTrace(ctx, newTrace("t")); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceKernels(ctx, "t", namedKernels("k", 5000)); err != nil { // about 100 pages
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the kernels checkpointed into the database file", func() bool {
		return size() > before+200<<10
	})
}
