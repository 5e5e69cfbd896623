package db

import (
	"context"
	"time"
)

// On SQLite the write connection never checkpoints the WAL itself
// (wal_autocheckpoint(0) in its DSN). A checkpoint copies the WAL's pages
// into the database file and syncs both files: tens of ms, hundreds on a
// busy disk, and SQLite runs it inside the COMMIT that filled the WAL past
// its limit, so the one write connection stays busy and every other
// writer waits behind it (a 1M-kernel ingest fills the WAL every few
// chunks). A goroutine checkpoints instead, on a connection of its own, a
// while after writes (checkpointSoon), PASSIVE: it never waits for the
// writer or for readers, and the writer goes on meanwhile.

// checkpointEvery is how long the checkpointer lets writes gather in the
// WAL before it checkpoints them: a few MB during a big ingest.
const checkpointEvery = 200 * time.Millisecond

// startCheckpointer starts the checkpointer on SQLite; it checkpoints what
// the migrations wrote first.
func (d *DB) startCheckpointer() {
	if d.ckpt == nil {
		return
	}
	d.ckptWorker = startWorker(d.checkpoint)
}

// checkpointSoon tells the checkpointer there are writes to checkpoint.
func (d *DB) checkpointSoon() { d.ckptWorker.Wake() }

// checkpoint waits checkpointEvery for writes to gather, then checkpoints
// them.
func (d *DB) checkpoint(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(checkpointEvery):
	}
	if _, err := d.ckpt.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil && ctx.Err() == nil {
		d.log.Error("checkpoint", "err", err)
	}
}

// stopCheckpointer stops the checkpointer and closes its connection.
func (d *DB) stopCheckpointer() {
	d.ckptWorker.Stop()
	if d.ckpt != nil {
		d.ckpt.Close()
	}
}
