package versioned

import "testing"

func TestCacheStartsAfreshWhenFull(t *testing.T) {
	c := New[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("b", 3) // a key it has: not full
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("a = %v, %v; want 1", v, ok)
	}
	if v := c.GetOrPut("b", func() int { t.Fatal("b made again"); return 0 }); v != 3 {
		t.Fatalf("b = %v, want 3", v)
	}
	if v := c.GetOrPut("c", func() int { return 4 }); v != 4 {
		t.Fatalf("c = %v, want 4", v)
	}
	for _, k := range []string{"a", "b"} {
		if _, ok := c.Get(k); ok {
			t.Errorf("%s kept in a cache of 2 after a third key", k)
		}
	}
	if v, ok := c.Get("c"); !ok || v != 4 {
		t.Fatalf("c = %v, %v; want 4", v, ok)
	}
}
