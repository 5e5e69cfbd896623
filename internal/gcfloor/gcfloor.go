package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Default is the floor cascade serve sets unless told otherwise: 64 MiB,
// a collection every 50 or so pages of 100 kernels.
const Default = 64 << 20

var (
	floor atomic.Int64
	base  int // the GC percentage GOGC asked for
	once  sync.Once
)

// Set makes floor bytes the least heap goal of the process's collector
// from the next collection on; 0 returns it to GOGC's goal alone. It is
// process-wide: the last call wins.
func Set(bytes int64) {
	floor.Store(max(bytes, 0))
	once.Do(func() {
		base = debug.SetGCPercent(100)
		debug.SetGCPercent(base)
		if base < 0 {
			return
		}
		arm()
	})
	runtime.GC()
}

// arm has adjust run after the next collection that finds a fresh
// object unreachable, and arm again then: a cleanup per cycle, none
// while the process is idle and allocates nothing.
func arm() {
	runtime.AddCleanup(new([16]byte), func(struct{}) {
		adjust()
		arm()
	}, struct{}{})
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// adjust sets the GC percentage for the live heap the last collection
// left: base, or more when base's goal would be below the floor.
func adjust() {
	metrics.Read(liveSample)
	live := int64(liveSample[0].Value.Uint64())
	debug.SetGCPercent(Percent(live, floor.Load(), base))
}

// Percent is the GC percentage that makes the goal of a heap with live
// bytes live the larger of floor and base's goal.
func Percent(live, floor int64, base int) int {
	live = max(live, 1<<20)
	if live+live*int64(base)/100 >= floor {
		return base
	}
	return int((floor - live) * 100 / live)
}
