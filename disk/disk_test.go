package disk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/disk"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

func TestMeasure(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		for _, tr := range []cascade.Trace{
			{ID: "up", State: cascade.TraceUploading, Bytes: 1 << 30},
			{ID: "ready", State: cascade.TraceReady, Bytes: 2 << 30},
			{ID: "sample", State: cascade.TraceReady, Bytes: 5 << 30, Sample: true},
		} {
			tr.TraceGPUArch, tr.Prompts = "sm_90", []string{}
			if err := d.SaveTrace(ctx, &tr); err != nil {
				t.Fatal(err)
			}
		}
		u, err := disk.Meter{Store: d, DataDir: t.TempDir(), BudgetGiB: 4}.Measure(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// 1 GiB pending × 2.2 + 2 GiB ready = 4.2 GiB, over a 4 GiB budget.
		pending := int64(1 << 30)
		if u.UsedBytes != 3<<30 || u.ProjectedBytes != int64(float64(pending)*2.2)+2<<30 || u.BudgetBytes != 4<<30 || u.FreeBytes == 0 {
			t.Fatalf("%+v", u)
		}
		if !strings.Contains(u.Warning, "over the 4.0 GiB budget") {
			t.Fatalf("warning %q", u.Warning)
		}
		if u, _ := (disk.Meter{Store: d, DataDir: t.TempDir()}).Measure(ctx); u.Warning != "" {
			t.Fatalf("no budget, plenty of room: %q", u.Warning)
		}
	})
}
