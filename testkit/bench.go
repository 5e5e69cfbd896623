package testkit

import (
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time (user and system) this process has used so far:
// in a benchmark that runs the server in process, the server's and the
// benchmark's together.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Probe runs write every interval in a goroutine of its own and times each
// call, until the function it returns is called; that function returns
// the times, shortest first. A benchmark of a big write uses it to measure
// how long another trace's writes wait meanwhile. An error from write ends
// the probe and is reported through fail.
func Probe(interval time.Duration, write func() error, fail func(...any)) (stop func() []time.Duration) {
	done := make(chan struct{})
	var waits []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
			t0 := time.Now()
			if err := write(); err != nil {
				fail(err)
				return
			}
			waits = append(waits, time.Since(t0))
		}
	})
	return func() []time.Duration {
		close(done)
		wg.Wait()
		slices.Sort(waits)
		return waits
	}
}

// ReportLatencies reports the median and 99th percentile of ds as b's
// metrics ms-p50 and ms-p99.
func ReportLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "ms-p50")
	b.ReportMetric(ms(0.99), "ms-p99")
}
