package cascade_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
)

func TestNewIDSortsByTimeAndDiffers(t *testing.T) {
	a := cascade.NewID(cascade.RunIDPrefix)
	time.Sleep(2 * time.Millisecond)
	b := cascade.NewID(cascade.RunIDPrefix)
	if !strings.HasPrefix(a, "r") || len(a) != 17 {
		t.Fatalf("id %q: want r and 16 characters", a)
	}
	if a >= b {
		t.Errorf("ids minted 2 ms apart do not sort by time: %q, %q", a, b)
	}
	seen := map[string]bool{}
	for range 10000 {
		id := cascade.NewID(cascade.PlanIDPrefix)
		if seen[id] {
			t.Fatalf("id %q minted twice", id)
		}
		seen[id] = true
	}
}
