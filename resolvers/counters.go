package resolvers

import (
	"context"
	"sync"

	"github.com/cascade-sim/cascade"
)

// counterWindow is how many kernels' counters one read fetches: a page
// of kernels (cascade.MaxPageSize at most) asks in one read, or two.
const counterWindow = 500

type countersKey struct{}

// counterCache holds one response's kernel counters, read a window of
// consecutive kernels at a time: Kernel.counters over a page of kernels
// reads the store once a window, not once a kernel. Each response (each
// event of a subscription) has its own, so none is older than it.
type counterCache struct {
	mu      sync.Mutex
	windows map[string][]counterWin // by trace
}

type counterWin struct {
	from, to int
	bySeq    map[int][]cascade.KernelCounter
}

func withCounterCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, countersKey{}, &counterCache{windows: map[string][]counterWin{}})
}

// kernelCounters returns the counters of the trace's kernel at seq (never
// nil), from the response's cache when it has one, reading the window of
// kernels seq is in when it does not hold it.
func kernelCounters(ctx context.Context, store Store, traceID string, seq int) ([]cascade.KernelCounter, error) {
	c, _ := ctx.Value(countersKey{}).(*counterCache)
	if c == nil {
		cs, err := store.KernelCounters(ctx, traceID, seq, seq+1)
		return orEmpty(cs), err
	}
	c.mu.Lock() // held across the read: the kernels beside wait for it rather than read again
	defer c.mu.Unlock()
	for _, w := range c.windows[traceID] {
		if seq >= w.from && seq < w.to {
			return orEmpty(w.bySeq[seq]), nil
		}
	}
	from := seq - seq%counterWindow // aligned: a page of consecutive kernels spans two windows at most
	cs, err := store.KernelCounters(ctx, traceID, from, from+counterWindow)
	if err != nil {
		return nil, err
	}
	w := counterWin{from: from, to: from + counterWindow, bySeq: map[int][]cascade.KernelCounter{}}
	for _, k := range cs {
		w.bySeq[k.Seq] = append(w.bySeq[k.Seq], k)
	}
	c.windows[traceID] = append(c.windows[traceID], w)
	return orEmpty(w.bySeq[seq]), nil
}

func orEmpty(cs []cascade.KernelCounter) []cascade.KernelCounter {
	if cs == nil {
		return []cascade.KernelCounter{}
	}
	return cs
}
