package runs

import "sync"

// cache keeps at most max values by key; putting one into a full cache
// empties it first. It suits values that are cheap to compute again under
// keys that name a version (a run's, a sweep's), so that a stale entry is
// never asked for again: no eviction order to keep. It is safe for
// concurrent use.
type cache[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newCache[K comparable, V any](max int) *cache[K, V] {
	return &cache[K, V]{max: max, m: map[K]V{}}
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v)
}

// getOrPut returns the value under k, putting newV() there first when
// there is none.
func (c *cache[K, V]) getOrPut(k K, newV func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	if !ok {
		v = newV()
		c.putLocked(k, v)
	}
	return v
}

func (c *cache[K, V]) putLocked(k K, v V) {
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}
