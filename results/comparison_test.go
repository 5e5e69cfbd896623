package results

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// simulatedKernel is a run's kernel result with its simulated time set, as
// Results passes it to Compare and ProjectSteps; ctx "" for none.
func simulatedKernel(id int, ctx string, simNs float64) cascade.RunKernel {
	k := cascade.RunKernel{Name: fmt.Sprintf("_Z7kernel%dPf", id), KernelID: cascade.Ptr(id), SimTimeNs: cascade.Ptr(simNs)}
	if ctx != "" {
		k.Context = cascade.Ptr(ctx)
	}
	return k
}

// measured gives each kernel's MeasuredNs and ErrorPct, NaN for nil.
func measured(ks []cascade.RunKernel) (ms, errs []float64) {
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for _, k := range ks {
		ms, errs = append(ms, val(k.MeasuredNs)), append(errs, val(k.ErrorPct))
	}
	return ms, errs
}

func equalNaN(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

func TestCompare(t *testing.T) {
	kernels := []cascade.RunKernel{
		simulatedKernel(1, "0xaaa", 1000),
		simulatedKernel(2, "0xaaa", 3000),
		simulatedKernel(1, "0xbbb", 2000),
		simulatedKernel(3, "0xaaa", 500), // never measured
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
	c, ok := Compare(kernels, rt.Rows)
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
	ms, errs := measured(kernels)
	if nan := math.NaN(); !equalNaN(ms, []float64{1000, 2500, 2500, nan}) || !equalNaN(errs, []float64{0, 20, -20, nan}) {
		t.Errorf("measured %v, errors %v", ms, errs)
	}
	if c.KernelsCompared != 3 || !near(c.MAPE, 40.0/3) || c.SimTotalNs != 6000 || c.MeasuredTotalNs != 6000 {
		t.Errorf("comparison = %+v", c)
	}
	if c.Correlation == nil || !near(*c.Correlation, math.Sqrt(3)/2) {
		t.Errorf("correlation = %v, want %v", c.Correlation, math.Sqrt(3)/2)
	}
}

func TestCompareCorrelationUndefined(t *testing.T) {
	dur := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		kernels []cascade.RunKernel
		rows    []tracedir.TimingRow
		ok      bool
	}{
		{"one kernel", []cascade.RunKernel{simulatedKernel(1, "", 10)}, []tracedir.TimingRow{{KernelID: 1, DurationNs: dur(20)}}, true},
		{"constant simulated times",
			[]cascade.RunKernel{simulatedKernel(1, "", 10), simulatedKernel(2, "", 10)},
			[]tracedir.TimingRow{{KernelID: 1, DurationNs: dur(20)}, {KernelID: 2, DurationNs: dur(30)}}, true},
		{"nothing matches", []cascade.RunKernel{simulatedKernel(1, "", 10)}, []tracedir.TimingRow{{KernelID: 2, DurationNs: dur(20)}}, false},
		{"other context only", []cascade.RunKernel{simulatedKernel(1, "0xa", 10)}, []tracedir.TimingRow{{KernelID: 1, Context: "0xb", DurationNs: dur(20)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := Compare(tt.kernels, tt.rows)
			if ok != tt.ok || c.Correlation != nil {
				t.Errorf("Compare = %+v, %v", c, ok)
			}
		})
	}
}

// TestCompareTakesSimulatedKernelsOnly: a kernel whose trace file named
// no kernel id, one the cycle limit truncated and one without a simulated
// time (no core clock) are not compared, though rows match their ids.
func TestCompareTakesSimulatedKernelsOnly(t *testing.T) {
	unnamed := simulatedKernel(2, "", 1000)
	unnamed.KernelID = nil
	truncated := simulatedKernel(3, "", 500)
	truncated.Truncated = true
	noClock := simulatedKernel(4, "", 0)
	noClock.SimTimeNs = nil
	kernels := []cascade.RunKernel{simulatedKernel(1, "", 1000), unnamed, truncated, noClock}
	var rows []tracedir.TimingRow
	for id := range 5 {
		rows = append(rows, tracedir.TimingRow{KernelID: id, DurationNs: cascade.Ptr(2000.0)})
	}
	c, ok := Compare(kernels, rows)
	ms, _ := measured(kernels)
	if nan := math.NaN(); !ok || c.KernelsCompared != 1 || !equalNaN(ms, []float64{2000, nan, nan, nan}) {
		t.Errorf("Compare = %+v, %v; measured %v", c, ok, ms)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
