package disk

import (
	"context"
	"fmt"
	"syscall"

	"github.com/cascade-sim/cascade"
)

// ProcessedFactor is the guide's rule of thumb: plan for about 2.2 times
// the uploaded size.
const ProcessedFactor = 2.2

// Store is the storage Measure needs; *db.DB implements it. TraceBytes
// sums the bytes of the traces still uploading or processing (pending)
// and of the others (done), the sample trace excepted.
type Store interface {
	TraceBytes(ctx context.Context) (pending, done int64, err error)
}

// Meter measures one data directory against its budget.
type Meter struct {
	Store     Store
	DataDir   string
	BudgetGiB float64 // 0 for none
}

// Measure computes the data directory's usage. Uploading and processing
// traces are projected at ProcessedFactor times their size; ready and
// failed ones are counted as they are.
func (m Meter) Measure(ctx context.Context) (cascade.DiskUsage, error) {
	store, dataDir, budgetGiB := m.Store, m.DataDir, m.BudgetGiB
	pending, done, err := store.TraceBytes(ctx)
	if err != nil {
		return cascade.DiskUsage{}, err
	}
	u := cascade.DiskUsage{
		BudgetBytes:    int64(budgetGiB * (1 << 30)),
		UsedBytes:      pending + done,
		ProjectedBytes: int64(float64(pending)*ProcessedFactor) + done,
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dataDir, &st); err == nil {
		u.FreeBytes = int64(st.Bavail) * int64(st.Bsize)
	}
	need := u.ProjectedBytes - u.UsedBytes
	switch {
	case u.BudgetBytes > 0 && u.ProjectedBytes > u.BudgetBytes:
		u.Warning = fmt.Sprintf("traces will need about %s once processed, over the %s budget (--disk-gib)", gib(u.ProjectedBytes), gib(u.BudgetBytes))
	case u.FreeBytes > 0 && need > u.FreeBytes:
		u.Warning = fmt.Sprintf("post-processing needs about %s more, but only %s is free", gib(need), gib(u.FreeBytes))
	}
	return u, nil
}

// gib prints a size in binary units ("1.5 GiB", "26.1 KiB").
func gib(n int64) string {
	v, units := float64(n), []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
