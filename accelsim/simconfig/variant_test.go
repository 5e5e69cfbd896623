package simconfig_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// ymlExcerpt is define-standard-cfgs.yml's shape, entries taken from
// Accel-Sim's own (its multi-line AccelWattch entry, a comment as
// extra_params, a base whose folder is not a tested config here).
const ymlExcerpt = `# Basefile Configs
TITANX:
    base_file: "$GPGPUSIM_ROOT/configs/tested-cfgs/SM6_TITANX/gpgpusim.config"
QV100:
    base_file: "$GPGPUSIM_ROOT/configs/tested-cfgs/SM7_QV100/gpgpusim.config"
QV100_64SM:
    base_file: "$GPGPUSIM_ROOT/configs/tested-cfgs/SM7_QV100_SMs/gpgpusim.config"
SASS:
    extra_params: "#SASS-Driven Accel-Sim"
64SM:
    extra_params: "-gpgpu_n_clusters 64"
L1OFF:
    extra_params: "-gmem_skip_L1D 1"
1455MHZ:
    extra_params: "-gpgpu_clock_domains 1455.0:1455.0:1455.0:850.0"
LOCALXBAR:
    extra_params: "-network_mode 2 -icnt_in_buffer_limit 512  -icnt_out_buffer_limit 512  -icnt_subnets 2"
Accelwattch_SASS_SIM:
    extra_params: "-power_simulation_enabled 1
    \n-power_simulation_mode 0
    \n-accelwattch_xml_file accelwattch_sass_sim.xml"
BROKEN:
    extra_params: "-gpgpu_n_clusters"
`

func variantFixture(t *testing.T) ([]cascade.SimConfig, simconfig.Modifiers) {
	t.Helper()
	dir := t.TempDir()
	for name, clock := range map[string]string{"SM7_QV100": "1132.0:1132.0:1132.0:850.0", "SM6_TITANX": "1417.0:1417.0:1417.0:2500.0"} {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := "-gpgpu_compute_capability_major 7\n-gpgpu_compute_capability_minor 0\n-gpgpu_n_clusters 80\n-gpgpu_scheduler lrr\n-gpgpu_clock_domains " + clock + "\n"
		if err := os.WriteFile(filepath.Join(d, "gpgpusim.config"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "trace.config"), []byte("-trace_opcode_latency_initiation_int 4,1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgs, err := simconfig.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	yml := filepath.Join(dir, "define-standard-cfgs.yml")
	if err := os.WriteFile(yml, []byte(ymlExcerpt), 0o644); err != nil {
		t.Fatal(err)
	}
	mods, err := simconfig.LoadModifiers(yml)
	if err != nil {
		t.Fatal(err)
	}
	return cfgs, mods
}

func TestParseModifiersReadsAccelSimsFile(t *testing.T) {
	_, mods := variantFixture(t)
	if got := mods.Bases["QV100"]; got != "SM7_QV100" {
		t.Errorf("QV100's tested config = %q, want SM7_QV100", got)
	}
	if ps := mods.Params["SASS"]; len(ps) != 0 {
		t.Errorf("SASS (a comment) = %v, want no overrides", ps)
	}
	aw := mods.Params["Accelwattch_SASS_SIM"]
	if len(aw) != 3 || aw[2] != (cascade.SimParam{Option: "-accelwattch_xml_file", Value: "accelwattch_sass_sim.xml", From: "Accelwattch_SASS_SIM"}) {
		t.Errorf("Accelwattch_SASS_SIM = %+v", aw)
	}
	if len(mods.Params["LOCALXBAR"]) != 4 {
		t.Errorf("LOCALXBAR = %+v, want 4 overrides", mods.Params["LOCALXBAR"])
	}
	if why := mods.Bad["BROKEN"]; !strings.Contains(why, "-gpgpu_n_clusters has no value") {
		t.Errorf("BROKEN: %q", why)
	}
}

func TestParseModifiersNamesTheLineOfBadYAML(t *testing.T) {
	_, err := simconfig.ParseModifiers([]byte("QV100:\n    base_file: \"x\n64SM: [\n"))
	if err == nil || !strings.Contains(err.Error(), "[") && !strings.Contains(err.Error(), "line") {
		t.Fatalf("err = %v, want the YAML parser's position", err)
	}
}

func TestVariantByNameAndByOverride(t *testing.T) {
	cfgs, mods := variantFixture(t)
	for _, tc := range []struct {
		name   string
		params []cascade.SimParam
		want   string
		args   string
		clock  float64
	}{
		{name: "SM7_QV100", want: "SM7_QV100", clock: 1132},
		{name: "QV100-64SM", want: "SM7_QV100-64SM", args: "-gpgpu_n_clusters 64", clock: 1132},
		{name: "SM7_QV100-64SM-1455MHZ", want: "SM7_QV100-64SM-1455MHZ", args: "-gpgpu_n_clusters 64 -gpgpu_clock_domains 1455.0:1455.0:1455.0:850.0", clock: 1455},
		{name: "SM7_QV100 -gpgpu_n_clusters 40", want: "SM7_QV100 -gpgpu_n_clusters 40", args: "-gpgpu_n_clusters 40", clock: 1132},
		{name: "TITANX", params: []cascade.SimParam{{Option: "-gpgpu_clock_domains", Value: "1000:1000:1000:1000"}},
			want: "SM6_TITANX -gpgpu_clock_domains 1000:1000:1000:1000", args: "-gpgpu_clock_domains 1000:1000:1000:1000", clock: 1000},
		// A direct override after a modifier's wins, as a later option does.
		{name: "QV100-64SM -gpgpu_n_clusters 20", want: "SM7_QV100-64SM -gpgpu_n_clusters 20", args: "-gpgpu_n_clusters 64 -gpgpu_n_clusters 20", clock: 1132},
	} {
		v, err := simconfig.Variant(cfgs, mods, tc.name, tc.params)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		args := strings.Join(simconfig.SimulatorArgs(v)[4:], " ")
		if v.Name != tc.want || args != tc.args || v.CoreClockMHz != tc.clock {
			t.Errorf("%s = %q, args %q, clock %v; want %q, %q, %v", tc.name, v.Name, args, v.CoreClockMHz, tc.want, tc.args, tc.clock)
		}
		if v.IsVariant() != (tc.args != "") {
			t.Errorf("%s: IsVariant = %v", tc.name, v.IsVariant())
		}
		// The canonical name names the same variant.
		again, err := simconfig.Variant(cfgs, mods, v.Name, nil)
		if err != nil || again.Name != v.Name || len(again.Params) != len(v.Params) {
			t.Errorf("%s: again %q: %+v, %v", tc.name, v.Name, again, err)
		}
	}
}

func TestVariantRefusesWhatCannotBeRight(t *testing.T) {
	cfgs, mods := variantFixture(t)
	for _, tc := range []struct {
		name   string
		params []cascade.SimParam
		want   string
	}{
		{name: "QV100-64MS", want: `no modifier "64MS" in ` + mods.File + `; did you mean "64SM"?`},
		{name: "QV10-64SM", want: `did you mean "QV100"?`},
		{name: "QV100_64SM-64SM", want: "QV100_64SM is SM7_QV100_SMs in " + mods.File + ", which is not among the tested configs"},
		{name: "QV100-BROKEN", want: "modifier BROKEN of " + mods.File + " cannot be used: extra_params: -gpgpu_n_clusters has no value"},
		{name: "QV100 -gpgpu_n_clusters", want: "-gpgpu_n_clusters has no value"},
		{name: "QV100 -gpgpu_n_clusters 40 -gpgpu_n_clusters 20", want: "-gpgpu_n_clusters is given twice"},
		{name: "QV100-64SM-64SM", want: "modifier 64SM is given twice; give it once"},
		{name: "SM7_QV100-64SM-1455MHZ-64SM -gpgpu_n_clusters 20", want: "modifier 64SM is given twice; give it once"},
		{name: "QV100", params: []cascade.SimParam{{Option: "gpgpu_n_clusters", Value: "4"}}, want: `"gpgpu_n_clusters" is not an option`},
		{name: "QV100", params: []cascade.SimParam{{Option: "-gpgpu_n_clusters", Value: "many"}}, want: `override -gpgpu_n_clusters: -gpgpu_n_clusters "many": not a whole number (SM7_QV100 has 80)`},
		{name: "QV100", params: []cascade.SimParam{{Option: "-gpgpu_clock_domains", Value: "1455"}}, want: "four positive numbers"},
		{name: "QV100 -gpgpu_n_clusters -3", want: "override -gpgpu_n_clusters: -gpgpu_n_clusters -3: a count cannot be negative (SM7_QV100 has 80"},
		{name: "QV100 -inter_config_file config_volta_islip.icnt", want: "override -inter_config_file: -inter_config_file config_volta_islip.icnt: no such file in SM7_QV100's config folder "},
		{name: "QV100 -accelwattch_xml_file /no/such/accelwattch.xml", want: "-accelwattch_xml_file /no/such/accelwattch.xml: stat /no/such/accelwattch.xml: no such file or directory"},
		{name: "QV100", params: []cascade.SimParam{{Option: "-gpgpu_scheduler", Value: "lrr\n-gpgpu_n_clusters 1"}},
			want: `-gpgpu_scheduler "lrr\n-gpgpu_n_clusters 1": the value holds a line break`},
		{name: "QV100", params: []cascade.SimParam{{Option: "-gpgpu_scheduler", Value: "lrr\r"}}, want: `-gpgpu_scheduler "lrr\r": the value holds a line break`},
		{name: "QV100", params: []cascade.SimParam{{Option: "-gpgpu_n_clusters\n-gpgpu_scheduler", Value: "2"}},
			want: `option "-gpgpu_n_clusters\n-gpgpu_scheduler": the name holds a line break`},
		{name: "QV100", params: []cascade.SimParam{{Option: "\r", Value: "2"}}, want: `option "\r": the name holds a line break`},
		{name: `QV100 -gpgpu_n_clusters "99999999999999999999"`,
			want: "override -gpgpu_n_clusters: -gpgpu_n_clusters 99999999999999999999: out of range; it takes a whole number from 1 to 9223372036854775807 (SM7_QV100 has 80)"},
		{name: "QV100 -gpgpu_n_clusters -99999999999999999999", want: "out of range; it takes a whole number from 1 to 9223372036854775807"},
		{name: "QV100", params: []cascade.SimParam{{Option: "", Value: "4"}}, want: "the option name is empty"},
		{name: "QV100", params: []cascade.SimParam{{Option: "-", Value: "4"}}, want: `"-" is not an option: the name after '-' is empty`},
		{name: "QV100 -gpgpu_n_clusters 0", want: "override -gpgpu_n_clusters: -gpgpu_n_clusters 0: a GPU needs at least one (SM7_QV100 has 80)"},
	} {
		_, err := simconfig.Variant(cfgs, mods, tc.name, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want %q", tc.name, tc.params, err, tc.want)
		}
	}
}

// TestVariantEmptyOptionName: an empty option name is said to be empty,
// with no option suggested in its place.
func TestVariantEmptyOptionName(t *testing.T) {
	cfgs, mods := variantFixture(t)
	_, err := simconfig.Variant(cfgs, mods, "QV100", []cascade.SimParam{{Option: "", Value: "4"}})
	if err == nil || err.Error() != "the option name is empty" {
		t.Errorf("err = %v, want \"the option name is empty\"", err)
	}
}

// TestVariantFileInFolder: a file option naming a file the base's config
// folder holds is taken, as the run's directory links that folder's
// files; the same name missing from it is refused
// (TestVariantRefusesWhatCannotBeRight).
func TestVariantFileInFolder(t *testing.T) {
	cfgs, mods := variantFixture(t)
	qv, ok := simconfig.Find(cfgs, "SM7_QV100")
	if !ok {
		t.Fatal("no SM7_QV100 in the fixture")
	}
	icnt := filepath.Join(filepath.Dir(simconfig.GPGPUSimPath(qv)), "config_volta_islip.icnt")
	if err := os.WriteFile(icnt, []byte("topology = fly;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := simconfig.Variant(cfgs, mods, "QV100 -inter_config_file config_volta_islip.icnt", nil)
	if err != nil || len(v.Params) != 1 || v.Params[0].Value != "config_volta_islip.icnt" {
		t.Fatalf("variant %+v, err %v", v, err)
	}
}

// TestVariantNameRoundTrips: every name Variant gives a variant reads back
// as the same variant, whatever its overrides' values hold; a value no
// name can carry is refused, naming its option.
func TestVariantNameRoundTrips(t *testing.T) {
	cfgs, mods := variantFixture(t)
	values := []string{"lrr gto", "lrr", "gto ", " gto", "lrr  gto", "lrr\tgto", `"lrr"`, `"lrr gto"`, `a"b`, `a "b" c`,
		`lrr"`, `"lrr`, `""`, `"`, "a#b", "#", "-x", "-x 1", "1 -gpgpu_n_clusters 2", "ü ß", " ", "x\u00a0y", `\"`, `a\ b`}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		const alphabet = "ab- \t\"#\\'\r"
		b := make([]byte, 1+rng.IntN(6))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		values = append(values, string(b))
	}
	for _, v := range values {
		for _, direct := range [][]cascade.SimParam{
			{{Option: "-gpgpu_scheduler", Value: v}},
			{{Option: "-gpgpu_scheduler", Value: v}, {Option: "-gpgpu_n_clusters", Value: "40"}},
			{{Option: "-gpgpu_n_clusters", Value: "40"}, {Option: "-gpgpu_scheduler", Value: v}},
		} {
			c, err := simconfig.Variant(cfgs, mods, "QV100", direct)
			if err != nil {
				if !strings.Contains(err.Error(), "-gpgpu_scheduler") {
					t.Errorf("%q: err %v names no option", v, err)
				}
				continue
			}
			again, err := simconfig.Variant(cfgs, mods, c.Name, nil)
			if err != nil {
				t.Errorf("%q: name %q: %v", v, c.Name, err)
				continue
			}
			if again.Name != c.Name || !slices.Equal(again.Params, c.Params) {
				t.Errorf("%q: name %q reads as %q %+v, want %+v", v, c.Name, again.Name, again.Params, c.Params)
			}
		}
	}
	// A name typed with any value text: what is taken reads back as itself.
	for range 300 {
		const alphabet = "ab- \t\"#\\'"
		b := make([]byte, 1+rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		c, err := simconfig.Variant(cfgs, mods, "QV100 -gpgpu_scheduler "+string(b), nil)
		if err != nil {
			continue
		}
		if again, err := simconfig.Variant(cfgs, mods, c.Name, nil); err != nil || again.Name != c.Name || !slices.Equal(again.Params, c.Params) {
			t.Errorf("typed %q: name %q reads as %q %+v, %v; want %+v", b, c.Name, again.Name, again.Params, err, c.Params)
		}
	}
	// The values a name can carry are taken, quoted only where they must be.
	for v, want := range map[string]string{
		"lrr gto": `SM7_QV100 -gpgpu_scheduler "lrr gto"`,
		"lrr":     `SM7_QV100 -gpgpu_scheduler lrr`,
		`a"b`:     `SM7_QV100 -gpgpu_scheduler a"b`,
	} {
		c, err := simconfig.Variant(cfgs, mods, "QV100", []cascade.SimParam{{Option: "-gpgpu_scheduler", Value: v}})
		if err != nil || c.Name != want {
			t.Errorf("%q: name %q, %v; want %q", v, c.Name, err, want)
		}
	}
}
