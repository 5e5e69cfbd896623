package tracedir_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/tracedir"
)

// peakHeap runs fn and returns the highest live heap seen while it ran,
// above the heap before it, sampled every millisecond.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}()
	fn()
	close(done)
	runtime.ReadMemStats(&ms)
	p := max(peak.Load(), ms.HeapAlloc)
	if p < base {
		return 0
	}
	return p - base
}

// writeRealTiming writes a real_timing.json of n rows (about 140 bytes
// each, as the profiler writes them) to dir.
func writeRealTiming(b *testing.B, dir string, n int) {
	f, err := os.Create(filepath.Join(dir, tracedir.RealTimingFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "{\"gpu\": \"H100\", \"rows\": [\n")
	for i := range n {
		sep := ",\n"
		if i == n-1 {
			sep = "\n"
		}
		fmt.Fprintf(w, `  {"kernel_id": %d, "kernel_name": "_Z24rms_norm_kernel_bf16_v2PfS_i", "context": "0x6165bdd7ec90", "duration_ns": %d.5, "invocation": 0}%s`, i+1, 1000+i%5000, sep)
	}
	fmt.Fprint(w, "]}\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// BenchmarkRealTiming reads a 200,000-row real_timing.json (27 MB) as
// the scanner checks it on every walk (RealTimingOf) and as a run's
// comparison reads it (ReadRealTiming); peak-MB is the most heap held at
// once.
func BenchmarkRealTiming(b *testing.B) {
	dir := b.TempDir()
	writeRealTiming(b, dir, 200_000)
	path := filepath.Join(dir, tracedir.RealTimingFile)
	b.Run("scanner", func(b *testing.B) {
		var peak uint64
		at := time.Now()
		for b.Loop() {
			// A changed file, read again (an unchanged one is not).
			at = at.Add(time.Second)
			if err := os.Chtimes(path, at, at); err != nil {
				b.Fatal(err)
			}
			tree, err := tracedir.Walk(dir)
			if err != nil {
				b.Fatal(err)
			}
			peak = max(peak, peakHeap(func() {
				if !tree.HasRealTiming(tracedir.Metadata{}) {
					b.Fatal("no real timing")
				}
			}))
		}
		b.ReportMetric(float64(peak)/1e6, "peak-MB")
	})
	b.Run("comparison", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				rt, err := tracedir.ReadRealTiming(filepath.Join(dir, tracedir.RealTimingFile))
				if err != nil || len(rt.Rows) != 200_000 {
					b.Fatal(err)
				}
			}))
		}
		b.ReportMetric(float64(peak)/1e6, "peak-MB")
	})
}
