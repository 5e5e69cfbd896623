package runs

import (
	"math"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/tracedir"
)

func TestCompare(t *testing.T) {
	sim := []SimTime{
		{Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}, SimNs: 1000},
		{Kernel: kernellist.Ref{ID: 2, Context: "0xaaa"}, SimNs: 3000},
		{Kernel: kernellist.Ref{ID: 1, Context: "0xbbb"}, SimNs: 2000},
		{Kernel: kernellist.Ref{ID: 3, Context: "0xaaa"}, SimNs: 500}, // never measured
	}
	rt, err := tracedir.ParseRealTiming([]byte(`{"rows": [
		{"kernel_id": 1, "context": "0xaaa", "duration_ns": 800, "invocation": 0},
		{"kernel_id": 1, "context": "0xaaa", "duration_ns": 1200, "invocation": 1},
		{"kernel_id": 2, "duration_ns": 2500},
		{"kernel_id": 1, "context": "0xbbb", "duration_ns": 2500},
		{"kernel_id": 1, "duration_ns": 99999},
		{"kernel_id": 3, "cycles": 700},
		{"kernel_id": 9, "duration_ns": 10},
		{"duration_ns": 10}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := Compare(sim, rt.Rows)
	if !ok {
		t.Fatal("nothing compared")
	}
	// By hand:
	//   1@0xaaa: measured mean(800, 1200) = 1000 (the context-less 99999 row
	//            loses to rows naming the context); error 100*(1000-1000)/1000 = 0
	//   2@0xaaa: only a context-less row, 2500; error 100*(3000-2500)/2500 = +20
	//   1@0xbbb: 2500; error 100*(2000-2500)/2500 = -20
	//   3@0xaaa: no duration_ns, not compared.
	//   MAPE = (0 + 20 + 20) / 3 = 13.333...
	//   totals: sim 1000+3000+2000 = 6000, measured 1000+2500+2500 = 6000
	//   Pearson: x = (1000, 3000, 2000), mean 2000, dx = (-1000, 1000, 0);
	//            y = (1000, 2500, 2500), mean 2000, dy = (-1000, 500, 500);
	//            Σdxdy = 1e6 + 5e5 + 0 = 1.5e6, Σdx² = 2e6, Σdy² = 1.5e6,
	//            r = 1.5e6 / sqrt(2e6 * 1.5e6) = 1.5e6 / sqrt(3e12) = √3/2.
	want := []KernelComparison{
		{Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}, SimNs: 1000, MeasuredNs: 1000, ErrorPct: 0, Measurements: 2},
		{Kernel: kernellist.Ref{ID: 2, Context: "0xaaa"}, SimNs: 3000, MeasuredNs: 2500, ErrorPct: 20, Measurements: 1},
		{Kernel: kernellist.Ref{ID: 1, Context: "0xbbb"}, SimNs: 2000, MeasuredNs: 2500, ErrorPct: -20, Measurements: 1},
	}
	if !slices.Equal(c.Kernels, want) {
		t.Errorf("kernels:\n got %+v\nwant %+v", c.Kernels, want)
	}
	if c.KernelsCompared != 3 || !near(c.MAPE, 40.0/3) || c.SimTotalNs != 6000 || c.MeasuredTotalNs != 6000 {
		t.Errorf("comparison = %+v", c)
	}
	if c.Correlation == nil || !near(*c.Correlation, math.Sqrt(3)/2) {
		t.Errorf("correlation = %v, want %v", c.Correlation, math.Sqrt(3)/2)
	}
	if k, ok := c.Kernel(kernellist.Ref{ID: 1, Context: "0xbbb"}); !ok || k.ErrorPct != -20 {
		t.Errorf("Kernel(1@0xbbb) = %+v, %v", k, ok)
	}
}

func TestCompareCorrelationUndefined(t *testing.T) {
	dur := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		sim  []SimTime
		rows []tracedir.TimingRow
		ok   bool
	}{
		{"one kernel", []SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}}, []tracedir.TimingRow{{KernelID: 1, DurationNs: dur(20)}}, true},
		{"constant simulated times",
			[]SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}, {Kernel: kernellist.Ref{ID: 2}, SimNs: 10}},
			[]tracedir.TimingRow{{KernelID: 1, DurationNs: dur(20)}, {KernelID: 2, DurationNs: dur(30)}}, true},
		{"nothing matches", []SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}}, []tracedir.TimingRow{{KernelID: 2, DurationNs: dur(20)}}, false},
		{"other context only", []SimTime{{Kernel: kernellist.Ref{ID: 1, Context: "0xa"}, SimNs: 10}}, []tracedir.TimingRow{{KernelID: 1, Context: "0xb", DurationNs: dur(20)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := Compare(tt.sim, tt.rows)
			if ok != tt.ok || c.Correlation != nil {
				t.Errorf("Compare = %+v, %v", c, ok)
			}
		})
	}
}

func TestSimTimes(t *testing.T) {
	results := []simlog.KernelResult{
		{LaunchUID: 1, Name: "a", Kernel: kernellist.Ref{ID: 1}, KernelOK: true, Cycles: 1755},
		{LaunchUID: 2, Name: "b", Cycles: 1755}, // trace name unknown
		{LaunchUID: 3, Name: "c", Kernel: kernellist.Ref{ID: 3}, KernelOK: true, Cycles: 877, Truncated: true},
	}
	got := SimTimes(results, 1755)
	if !slices.Equal(got, []SimTime{{Kernel: kernellist.Ref{ID: 1}, Name: "a", SimNs: 1000}}) {
		t.Errorf("SimTimes = %+v", got)
	}
	if got := SimTimes(results, 0); got != nil {
		t.Errorf("SimTimes without a clock = %+v", got)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
