package runs_test

import (
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
)

// TestSuggestedSimConfig: metadata.json's suggested_sim_config is the New
// run screen's preselection whenever a config has that name (QA: an sm_61
// trace suggesting SM7_QV100 got SM6_TITANX, unsaid), in another case
// too, and the trace's warnings say what a user would not expect: a name
// in another case, a config of another architecture, a name no config has.
func TestSuggestedSimConfig(t *testing.T) {
	t.Parallel()
	c := runs.New(runs.Config{
		BucketDir: t.TempDir(), WorkDir: t.TempDir(), ConfigsDir: simconfigtest.Write(t, t.TempDir(), simconfigtest.TitanX, simconfigtest.QV100),
		NewExecutor: func(h runs.Host) runs.Executor { return &fakeExec{} }, Events: &events{},
	}).Configs()
	for _, tt := range []struct {
		suggested, want string
		warnings        []string
	}{
		{"", simconfigtest.TitanX, nil},
		{simconfigtest.TitanX, simconfigtest.TitanX, nil},
		{simconfigtest.QV100, simconfigtest.QV100, []string{"metadata.json: suggested_sim_config: SM7_QV100 is a compute capability 7.0 config and the trace is sm_61: its runs simulate the trace on another architecture than it was taken on"}},
		{"sm7_qv100", simconfigtest.QV100, []string{`metadata.json: suggested_sim_config: no config "sm7_qv100"; the New run screen preselects "SM7_QV100", its name in another case`}},
		{"QV100", simconfigtest.TitanX, []string{`metadata.json: suggested_sim_config: no config "QV100"; did you mean "SM7_QV100"?; the New run screen preselects the first compatible config instead`}},
	} {
		tr := cascade.Trace{ID: "t", TraceGPUArch: "sm_61", SuggestedSimConfig: cascade.Ptr(tt.suggested)}
		if tt.suggested == "" {
			tr.SuggestedSimConfig = nil
		}
		got, ok, err := c.DefaultSimConfig(tr)
		if err != nil || !ok || got.Name != tt.want {
			t.Errorf("suggested %q: preselects %q (%v, %v), want %q", tt.suggested, got.Name, ok, err, tt.want)
		}
		if w := c.SimConfigWarnings(tr); !slices.Equal(w, tt.warnings) {
			t.Errorf("suggested %q: warnings\n%q\nwant\n%q", tt.suggested, w, tt.warnings)
		}
	}
}
