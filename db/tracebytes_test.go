package db_test

import (
	"context"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestTraceBytes: the bytes of traces still uploading or processing are
// pending, those of the others done, and the sample trace's are neither
// (disk.Meter projects them).
func TestTraceBytes(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		for _, tr := range []cascade.Trace{
			{ID: "up", State: cascade.TraceUploading, Bytes: 1 << 30},
			{ID: "proc", State: cascade.TraceProcessing, Bytes: 1 << 20},
			{ID: "ready", State: cascade.TraceReady, Bytes: 2 << 30},
			{ID: "failed", State: cascade.TraceFailed, Bytes: 3 << 20},
			{ID: "sample", State: cascade.TraceReady, Bytes: 5 << 30, Sample: true},
		} {
			tr.TraceGPUArch, tr.Prompts = "sm_90", []string{}
			if err := d.SaveTrace(ctx, &tr); err != nil {
				t.Fatal(err)
			}
		}
		pending, done, err := d.TraceBytes(ctx)
		if err != nil || pending != 1<<30+1<<20 || done != 2<<30+3<<20 {
			t.Fatalf("pending %d, done %d, %v; want %d, %d", pending, done, err, 1<<30+1<<20, 2<<30+3<<20)
		}
	})
}
