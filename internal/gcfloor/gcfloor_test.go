package gcfloor_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/internal/gcfloor"
	"github.com/cascade-sim/cascade/testkit"
)

// TestPercent: the goal is the floor while the live heap is small, and
// GOGC's own once that is above the floor.
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor int64
		base, want  int
	}{
		{3 * mib, 64 * mib, 100, 2033},  // 3 MiB × 21.33 = 64 MiB
		{32 * mib, 64 * mib, 100, 100},  // GOGC's goal, 64 MiB, is the floor
		{40 * mib, 64 * mib, 100, 100},  // above it
		{40 * mib, 64 * mib, 50, 60},    // GOGC=50's 60 MiB is below it
		{100, 64 * mib, 100, 6300},      // a live heap under 1 MiB counts as 1 MiB
		{3 * mib, 0, 100, 100},          // no floor
		{500 * mib, 64 * mib, 200, 200}, // GOGC kept
	} {
		if got := gcfloor.Percent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.live, c.floor, c.base, got, c.want)
		}
	}
}

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestFloorFollowsTheLiveHeap runs the real collector: with a small live
// heap the goal rises to the floor; with a live heap above the floor the
// percentage goes back to GOGC's (100 in tests), and up again once that
// heap is garbage; with the floor removed it goes back to GOGC's.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	const floor = 48 << 20
	gcfloor.Set(floor)
	testkit.Eventually(t, 30*time.Second, "the heap goal at the floor", func() bool {
		runtime.GC()
		return read("/gc/heap/goal:bytes") >= floor*9/10 && read("/gc/gogc:percent") > 100
	})
	big := make([]byte, 2*floor)
	testkit.Eventually(t, 30*time.Second, "GOGC's percentage with a live heap above the floor", func() bool {
		runtime.GC()
		return read("/gc/gogc:percent") == 100
	})
	runtime.KeepAlive(big)
	testkit.Eventually(t, 30*time.Second, "the floor again once the heap is small", func() bool {
		runtime.GC()
		return read("/gc/gogc:percent") > 100
	})
	gcfloor.Set(0)
	testkit.Eventually(t, 30*time.Second, "GOGC's percentage without a floor", func() bool {
		runtime.GC()
		return read("/gc/gogc:percent") == 100
	})
}
