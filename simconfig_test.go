package cascade_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

func TestSimTimeNs(t *testing.T) {
	// 3510 cycles at 1755 MHz: 3510 / 1755e6 s = 2 µs.
	if ns, ok := (cascade.SimConfig{CoreClockMHz: 1755}).SimTimeNs(3510); !ok || ns != 2000 {
		t.Errorf("SimTimeNs = %v, %v; want 2000", ns, ok)
	}
	if _, ok := (cascade.SimConfig{}).SimTimeNs(3510); ok {
		t.Error("SimTimeNs with no clock: ok")
	}
}
