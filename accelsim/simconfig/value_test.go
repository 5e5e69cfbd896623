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
	cfgs, err := simconfig.Load(simconfigtest.Write(t, t.TempDir(), simconfigtest.QV100))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := simconfig.Find(cfgs, simconfigtest.QV100)
	if !ok {
		t.Fatal("no SM7_QV100")
	}
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
