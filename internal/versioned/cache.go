// Package versioned is a small cache for values kept under keys that name
// a version (a run's, a sweep's): a stale entry is never asked for again,
// so a full cache simply starts afresh.
package versioned

import "sync"

// Cache keeps at most max values by key; putting one into a full cache
// empties it first. It suits values that are cheap to compute again under
// keys that name a version (a run's, a sweep's), so that a stale entry is
// never asked for again: no eviction order to keep. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

// New returns a cache of at most max values.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, m: map[K]V{}}
}

// Get returns the value under k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Put puts v under k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v)
}

// GetOrPut returns the value under k, putting newV() there first when
// there is none.
func (c *Cache[K, V]) GetOrPut(k K, newV func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	if !ok {
		v = newV()
		c.putLocked(k, v)
	}
	return v
}

func (c *Cache[K, V]) putLocked(k K, v V) {
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}
