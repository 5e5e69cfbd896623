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

// startCheckpointer starts the checkpointer on SQLite.
func (d *DB) startCheckpointer() {
	if d.ckpt == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.ckptStop, d.ckptKick, d.ckptDone = cancel, make(chan struct{}, 1), make(chan struct{})
	go d.checkpointer(ctx)
	d.checkpointSoon() // what the migrations wrote
}

// checkpointSoon tells the checkpointer there are writes to checkpoint.
func (d *DB) checkpointSoon() {
	if d.ckptKick == nil {
		return
	}
	select {
	case d.ckptKick <- struct{}{}:
	default:
	}
}

func (d *DB) checkpointer(ctx context.Context) {
	defer close(d.ckptDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.ckptKick:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(checkpointEvery):
		}
		if _, err := d.ckpt.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil && ctx.Err() == nil {
			d.log.Error("checkpoint", "err", err)
		}
	}
}

// stopCheckpointer stops the checkpointer and closes its connection.
func (d *DB) stopCheckpointer() {
	if d.ckptStop != nil {
		d.ckptStop()
		<-d.ckptDone
	}
	if d.ckpt != nil {
		d.ckpt.Close()
	}
}
