package simconfig

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

func TestUnknown(t *testing.T) {
	cfgs := []cascade.SimConfig{{Name: "SM6_TITANX"}, {Name: "SM7_QV100"}, {Name: "SM7_TITANV"}, {Name: "SM86_RTX3070"}, {Name: "SM90_H100"}}
	cases := []struct{ name, want string }{
		{"sm6_titanx", `no config "sm6_titanx"; did you mean "SM6_TITANX"?`},
		{"SM6_TITANX ", `no config "SM6_TITANX "; did you mean "SM6_TITANX"?`},
		{"SM90_H10", `no config "SM90_H10"; did you mean "SM90_H100"?`},
		{"sm7_qv10o", `no config "sm7_qv10o"; did you mean "SM7_QV100"?`},
		{"SM7_TITAN", `no config "SM7_TITAN"; did you mean "SM7_TITANV"?`},
		{"SM8_RTX3070", `no config "SM8_RTX3070"; did you mean "SM86_RTX3070"?`},
		{"TITANX", `no config "TITANX"; did you mean "SM6_TITANX"?`},
		{"rtx3070", `no config "rtx3070"; did you mean "SM86_RTX3070"?`},
		{"SM7_", `no config "SM7_" (have SM6_TITANX, SM7_QV100, SM7_TITANV, SM86_RTX3070, SM90_H100)`},
		{"SM99_NOPE", `no config "SM99_NOPE" (have SM6_TITANX, SM7_QV100, SM7_TITANV, SM86_RTX3070, SM90_H100)`},
	}
	for _, c := range cases {
		if got := Unknown(cfgs, c.name); got != c.want {
			t.Errorf("Unknown(%q) = %s\nwant %s", c.name, got, c.want)
		}
	}
	tied := []cascade.SimConfig{{Name: "SM7_QV100"}, {Name: "SM7_QV200"}}
	if got, want := Unknown(tied, "SM7_QV300"), `no config "SM7_QV300"; did you mean "SM7_QV100" or "SM7_QV200"?`; got != want {
		t.Errorf("tied: %s, want %s", got, want)
	}
	if got, want := Unknown(nil, "x"), `no config "x": no configs are set up (CASCADE_SIM_CONFIGS_DIR)`; got != want {
		t.Errorf("none: %s, want %s", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"sm90_h100", "sm90_h10", 1}, {"ab", "ba", 2}} {
		if d := editDistance(c.a, c.b); d != c.d || editDistance(c.b, c.a) != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
