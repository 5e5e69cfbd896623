package simconfig_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
)

// TestValue: a config's value of an option is its files', an override's
// when it has one (the later winning), and none for an option neither
// names.
func TestValue(t *testing.T) {
	c := loadQV100(t)
	if v, ok, err := simconfig.Value(c, "-gpgpu_n_clusters"); err != nil || !ok || v != "80" {
		t.Errorf("shipped: %q %v %v", v, ok, err)
	}
	c.Params = []cascade.SimParam{{Option: "-gpgpu_n_clusters", Value: "64", From: "64SM"}, {Option: "-gpgpu_n_clusters", Value: "40"}}
	if v, ok, err := simconfig.Value(c, "-gpgpu_n_clusters"); err != nil || !ok || v != "40" {
		t.Errorf("overridden: %q %v %v", v, ok, err)
	}
	if v, ok, err := simconfig.Value(c, "-gpgpu_no_such_option"); err != nil || ok || v != "" {
		t.Errorf("unknown: %q %v %v", v, ok, err)
	}
}

// TestL2Bytes: a loaded config carries its L2's capacity (6 MB on
// SM7_QV100: 32 sets × 128 B × 24 ways × 32 memory channels × 2
// sub-partitions), and a variant that overrides the L2 its own, as L2
// reads it.
func TestL2Bytes(t *testing.T) {
	c := loadQV100(t)
	if c.L2Bytes != 6<<20 {
		t.Errorf("loaded: L2 %d bytes, want 6 MB", c.L2Bytes)
	}
	v, err := simconfig.Apply(c, []cascade.SimParam{{Option: "-gpgpu_n_mem", Value: "16"}})
	if err != nil {
		t.Fatal(err)
	}
	b, flushed, err := simconfig.L2(v)
	if v.L2Bytes != 3<<20 || b != v.L2Bytes || flushed || err != nil {
		t.Errorf("variant: L2Bytes %d, L2 %d %v %v; want 3 MB", v.L2Bytes, b, flushed, err)
	}
}

// loadQV100 loads the test excerpt of SM7_QV100.
func loadQV100(t *testing.T) cascade.SimConfig {
	t.Helper()
	cfgs, err := simconfig.Load(simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := simconfig.Find(cfgs, simconfigtest.QV100)
	if !ok {
		t.Fatal("no SM7_QV100")
	}
	return c
}
