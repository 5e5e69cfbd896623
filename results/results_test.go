package results

import (
	"errors"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestRecordedConfig: a run's results use the core clock recorded with
// it, whatever the configs are now; a run from before clocks were
// recorded uses its config's, and has none, with a reason, when the
// config is gone.
func TestRecordedConfig(t *testing.T) {
	now := []cascade.SimConfig{{Name: "SM90_H100", CoreClockMHz: 1980}}
	recorded := cascade.Run{SimConfig: "SM90_H100", Figures: cascade.RunFigures{CoreClockMHz: 1755}}
	old := cascade.Run{SimConfig: "SM90_H100"}
	gone := cascade.Run{SimConfig: "SM7_QV100"}
	cases := []struct {
		name    string
		r       cascade.Run
		cfgs    []cascade.SimConfig
		err     error
		clock   float64
		problem string
	}{
		{"Recorded", recorded, now, nil, 1755, ""},
		{"RecordedConfigGone", cascade.Run{SimConfig: "SM7_QV100", Figures: recorded.Figures}, now, nil, 1755, ""},
		{"RecordedConfigsUnreadable", recorded, nil, errors.New("boom"), 1755, ""},
		{"OldRun", old, now, nil, 1980, ""},
		{"OldRunConfigGone", gone, now, nil, 0, "SM7_QV100 is no longer in CASCADE_SIM_CONFIGS_DIR (/configs)"},
		{"OldRunConfigsUnreadable", old, nil, errors.New("boom"), 0, "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, problem := recordedConfig(c.cfgs, c.err, "no longer in CASCADE_SIM_CONFIGS_DIR (/configs)", c.r)
			if cfg.CoreClockMHz != c.clock || (c.problem == "") != (problem == "") || !strings.Contains(problem, c.problem) {
				t.Errorf("clock %v, problem %q; want %v, %q", cfg.CoreClockMHz, problem, c.clock, c.problem)
			}
		})
	}
}

// TestResultsLeaveOutUnprojectedSteps: a step none of whose events has a
// simulated kernel has no projection: it is left out of the steps, which
// would show it projected as measured, and a problem line says so.
func TestResultsLeaveOutUnprojectedSteps(t *testing.T) {
	tt := traceTiming{
		timeline: &tracedir.Timeline{Steps: []tracedir.Step{
			{Step: 0, MeasuredNs: 10000, Events: []tracedir.Event{{Name: "_Z7kernel1Pf", DurationNs: 2000}}},
			{Step: 1, MeasuredNs: 5000, Events: []tracedir.Event{{Name: "_Z7kernel2Pf", DurationNs: 4000}}},
		}},
		mapping: tracedir.KernelMapping{Entries: []tracedir.EventMapping{
			{Step: 0, Event: 0, Kernel: kernellist.Ref{ID: 1}},
			{Step: 1, Event: 0, Kernel: kernellist.Ref{ID: 2}},
		}},
	}
	k1 := cascade.RunKernel{Name: "_Z7kernel1Pf", KernelID: cascade.Ptr(1), SimCycles: 1755}
	k2 := cascade.RunKernel{Name: "_Z7kernel2Pf", KernelID: cascade.Ptr(2), SimCycles: 1755}

	// A subset run of kernel 1: step 1 has nothing simulated.
	res := tt.results([]cascade.RunKernel{k1}, cascade.SimConfig{CoreClockMHz: 1755})
	if len(res.Steps) != 1 || res.Steps[0].Step != 0 || res.Steps[0].ProjectedNs != 9000 {
		t.Errorf("subset: steps %+v", res.Steps)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "1 of 2 steps not projected") {
		t.Errorf("subset: problems %q", res.Problems)
	}

	// No clock: no simulated times, no step projected.
	res = tt.results([]cascade.RunKernel{k1, k2}, cascade.SimConfig{})
	if len(res.Steps) != 0 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "2 of 2 steps not projected") || !strings.Contains(res.Problems[0], "no kernel of the run has a simulated time") {
		t.Errorf("no clock: steps %+v, problems %q", res.Steps, res.Problems)
	}
}

// TestPreferred: a config's figures come from its latest simulated run,
// a sampled run only when there is no other.
func TestPreferred(t *testing.T) {
	full1 := cascade.Run{Seq: 1}
	sampled3 := cascade.Run{Seq: 3, Sampling: &cascade.SampledRun{}}
	full2 := cascade.Run{Seq: 2}
	sampled4 := cascade.Run{Seq: 4, Sampling: &cascade.SampledRun{}}
	for _, c := range []struct {
		r, o cascade.Run
		want bool
	}{
		{full2, full1, true}, {full1, full2, false},
		{full1, sampled3, true}, {sampled3, full1, false},
		{sampled4, sampled3, true}, {sampled3, sampled4, false},
	} {
		if got := preferred(c.r, c.o); got != c.want {
			t.Errorf("preferred(run %d, run %d) = %v, want %v", c.r.Seq, c.o.Seq, got, c.want)
		}
	}
}
