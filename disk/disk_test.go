package disk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/disk"
)

// sums is a Store of fixed sums (db's TestTraceBytes checks the database's).
type sums struct{ pending, done int64 }

func (s sums) TraceBytes(context.Context) (int64, int64, error) { return s.pending, s.done, nil }

func TestMeasure(t *testing.T) {
	ctx := context.Background()
	pending := int64(1 << 30)
	s := sums{pending: pending, done: 2 << 30}
	u, err := disk.Meter{Store: s, DataDir: t.TempDir(), BudgetGiB: 4}.Measure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 1 GiB pending × 2.2 + 2 GiB ready = 4.2 GiB, over a 4 GiB budget.
	if u.UsedBytes != 3<<30 || u.ProjectedBytes != int64(float64(pending)*2.2)+2<<30 || u.BudgetBytes != 4<<30 || u.FreeBytes == 0 {
		t.Fatalf("%+v", u)
	}
	if !strings.Contains(u.Warning, "over the 4.0 GiB budget") {
		t.Fatalf("warning %q", u.Warning)
	}
	if u, _ := (disk.Meter{Store: s, DataDir: t.TempDir()}).Measure(ctx); u.Warning != "" {
		t.Fatalf("no budget, plenty of room: %q", u.Warning)
	}
}
