package runs

import "testing"

func TestCacheStartsAfreshWhenFull(t *testing.T) {
	c := newCache[string, int](2)
	c.put("a", 1)
	c.put("b", 2)
	c.put("b", 3) // a key it has: not full
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("a = %v, %v; want 1", v, ok)
	}
	if v := c.getOrPut("b", func() int { t.Fatal("b made again"); return 0 }); v != 3 {
		t.Fatalf("b = %v, want 3", v)
	}
	if v := c.getOrPut("c", func() int { return 4 }); v != 4 {
		t.Fatalf("c = %v, want 4", v)
	}
	for _, k := range []string{"a", "b"} {
		if _, ok := c.get(k); ok {
			t.Errorf("%s kept in a cache of 2 after a third key", k)
		}
	}
	if v, ok := c.get("c"); !ok || v != 4 {
		t.Fatalf("c = %v, %v; want 4", v, ok)
	}
}
