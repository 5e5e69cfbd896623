package runs

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simlog"
)

func TestParseRealTiming(t *testing.T) {
	tests := []struct {
		name string
		json string
		rows []int // kernel ids of the good rows
		bad  []string
		err  string
	}{
		{name: "list", json: `[{"kernel_id": 1, "duration_ns": 10.5}, {"kernel_id": 2}]`, rows: []int{1, 2}},
		{name: "object with rows", json: `{"gpu": "H100", "rows": [{"kernel_id": 3, "context": "0x1", "cycles": 100, "invocation": 0}]}`, rows: []int{3}},
		{name: "nulls are absent", json: `[{"kernel_id": 1, "kernel_name": null, "duration_ns": null}]`, rows: []int{1}},
		{name: "bad rows skipped", json: `[
			{"kernel_id": 1, "duration_ns": 5},
			{"kernel_name": "_Z3fooPf", "duration_ns": 5},
			{"kernel_id": "2", "duration_ns": 5},
			{"kernel_id": 2.5},
			{"kernel_id": 4, "duration_ns": "fast"},
			{"kernel_id": 5, "duration_ns": 0},
			{"kernel_id": 6, "cycles": -1},
			{"kernel_id": 7, "context": 12},
			7,
			{"kernel_id": 8, "invocation": 1.5}
		]`, rows: []int{1}, bad: []string{
			"[1]: kernel_id: missing",
			"[2]: kernel_id: want an integer, got a string",
			"[3]: kernel_id: want an integer, got 2.5",
			"[4]: duration_ns: want a number, got a string",
			"[5]: duration_ns: must be > 0",
			"[6]: cycles: must be >= 0",
			"[7]: context: want a string, got 12",
			"[8]: want an object",
			"[9]: invocation: want an integer, got 1.5",
		}},
		{name: "bad row inside rows", json: `{"rows": [{"kernel_id": true}]}`, bad: []string{"rows[0]: kernel_id: want an integer, got a boolean"}},
		{name: "not json", json: `kernel_id,duration_ns`, err: "not JSON"},
		{name: "empty", json: ``, err: "not JSON"},
		{name: "object without rows", json: `{"kernels": []}`, err: `an object without "rows"`},
		{name: "rows not a list", json: `{"rows": {}}`, err: "rows: want a list"},
		{name: "a number", json: `42`, err: "want a list or an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := ParseRealTiming([]byte(tt.json))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []int
			for _, r := range rt.Rows {
				ids = append(ids, r.KernelID)
			}
			var bad []string
			for _, b := range rt.Bad {
				bad = append(bad, b.String())
			}
			if !slices.Equal(ids, tt.rows) || !slices.Equal(bad, tt.bad) {
				t.Errorf("rows %v, bad %q; want %v, %q", ids, bad, tt.rows, tt.bad)
			}
		})
	}
}

func TestParseRealTimingFields(t *testing.T) {
	rt, err := ParseRealTiming([]byte(`[{"kernel_id": 3, "kernel_name": "_Z3fooPf", "context": "0x6165BDD7EC90",
		"duration_ns": 1523.5, "cycles": 2673, "invocation": 2}]`))
	if err != nil || len(rt.Rows) != 1 {
		t.Fatalf("%+v, %v", rt, err)
	}
	r := rt.Rows[0]
	if r.KernelID != 3 || r.KernelName != "_Z3fooPf" || r.Context != "0x6165bdd7ec90" ||
		*r.DurationNs != 1523.5 || *r.Cycles != 2673 || *r.Invocation != 2 {
		t.Errorf("row = %+v", r)
	}
}

func TestCompare(t *testing.T) {
	sim := []SimTime{
		{Kernel: kernellist.Ref{ID: 1, Context: "0xaaa"}, SimNs: 1000},
		{Kernel: kernellist.Ref{ID: 2, Context: "0xaaa"}, SimNs: 3000},
		{Kernel: kernellist.Ref{ID: 1, Context: "0xbbb"}, SimNs: 2000},
		{Kernel: kernellist.Ref{ID: 3, Context: "0xaaa"}, SimNs: 500}, // never measured
	}
	rt, err := ParseRealTiming([]byte(`{"rows": [
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
		rows []TimingRow
		ok   bool
	}{
		{"one kernel", []SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}}, []TimingRow{{KernelID: 1, DurationNs: dur(20)}}, true},
		{"constant simulated times",
			[]SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}, {Kernel: kernellist.Ref{ID: 2}, SimNs: 10}},
			[]TimingRow{{KernelID: 1, DurationNs: dur(20)}, {KernelID: 2, DurationNs: dur(30)}}, true},
		{"nothing matches", []SimTime{{Kernel: kernellist.Ref{ID: 1}, SimNs: 10}}, []TimingRow{{KernelID: 2, DurationNs: dur(20)}}, false},
		{"other context only", []SimTime{{Kernel: kernellist.Ref{ID: 1, Context: "0xa"}, SimNs: 10}}, []TimingRow{{KernelID: 1, Context: "0xb", DurationNs: dur(20)}}, false},
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

func TestReadRealTiming(t *testing.T) {
	path := filepath.Join(t.TempDir(), "real_timing.json")
	os.WriteFile(path, []byte(`[{"kernel_id": 1, "duration_ns": 5}]`), 0o644)
	if rt, err := ReadRealTiming(path); err != nil || len(rt.Rows) != 1 {
		t.Errorf("%+v, %v", rt, err)
	}
	os.WriteFile(path, []byte(`{`), 0o644)
	if _, err := ReadRealTiming(path); err == nil || !strings.Contains(err.Error(), "real_timing.json: not JSON") {
		t.Errorf("err = %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
