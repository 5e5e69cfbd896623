package main

import (
	"context"
	"encoding/csv"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/upload"
)

// TestRealAccelSimPower: vecAdd on SM7_QV100 with AccelWattch enabled
// (the variant QV100-PWR_ENABLE of the checkout's define-standard-cfgs.yml:
// -power_simulation_enabled 1 after the config files), by the real
// simulator through the API: the run's statistics gain power
// (kernel_avg_power = 83.1298 W in its accelwattch_power_report.log), its
// breakdown (DRAMP 13.4299 W), energy at the core clock of 1132 MHz and
// instructions per joule, kernel by kernel, as the run's totals, in the
// kernels CSV and in the configs compared; the log's own statistics are
// those of a run without power, as before.
func TestRealAccelSimPower(t *testing.T) {
	t.Parallel() // beside the package's other simulations and servers: see docs/development.md
	checkout := testkit.RealAccelSim(t)
	trace := testkit.RealTrace(t, "vecadd-sm61")
	data := t.TempDir()
	addr, _, _ := realServer(t, data, checkout)
	prefix := filepath.Join(data, "s3", "cascade", "traces")
	if _, err := upload.Upload(context.Background(), upload.Options{Source: trace, PrefixDir: prefix, RunName: "vecadd"}); err != nil {
		t.Fatal(err)
	}
	waitTrace(t, addr, "vecadd", "READY")

	var l struct{ LaunchRun struct{ ID string } }
	if errs := gqlVars(t, addr, `mutation { launchRun(input: {traceId: "vecadd", simConfig: "QV100-PWR_ENABLE"}) { id } }`, nil, &l); len(errs) > 0 {
		t.Fatalf("launch: %v", errs)
	}
	id := l.LaunchRun.ID
	var r struct {
		Run struct {
			realRun
			StatCounters []struct{ Name, Kind, Unit string }
			StatTotals   []*float64
		}
	}
	testkit.Eventually(t, 10*time.Minute, "run over", func() bool {
		gqlVars(t, addr, `query($id: ID!) { run(id: $id) { `+realRunFields+` statCounters { name kind unit } statTotals } }`, map[string]any{"id": id}, &r)
		return r.Run.State == "SUCCEEDED" || r.Run.State == "FAILED"
	})
	run := r.Run
	if run.State != "SUCCEEDED" || len(run.Kernels) != 1 || run.Kernels[0].SimCycles != 8823 {
		t.Fatalf("run: %+v, want 1 kernel of 8,823 cycles", run)
	}
	energy := 83.1298 * 8823 / 1132e6
	want := map[string]struct {
		kind, unit string
		v          float64
	}{
		"power":           {"KERNEL", "W", 83.1298},
		"power_max":       {"KERNEL", "W", 152.136},
		"power_dram":      {"KERNEL", "W", 13.4299},
		"power_static":    {"KERNEL", "W", 12.7145},
		"energy":          {"AGGREGATE", "J", energy},
		"insts_per_joule": {"DERIVED", "insts/J", 2203168 / energy},
		"cycles":          {"AGGREGATE", "cycles", 8823},
	}
	names := make([]string, len(run.StatCounters))
	for i, c := range run.StatCounters {
		names[i] = c.Name
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		delete(want, c.Name)
		if c.Kind != w.kind || c.Unit != w.unit {
			t.Errorf("%s: %s in %s, want %s in %s", c.Name, c.Kind, c.Unit, w.kind, w.unit)
		}
		for what, got := range map[string]*float64{"kernel": run.Kernels[0].StatValues[i], "run": run.StatTotals[i]} {
			if got == nil || math.Abs(*got-w.v) > 1e-9*w.v {
				t.Errorf("%s of the %s: %v, want %v", c.Name, what, deref(got), w.v)
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("no %v among the run's statistics %v", want, names)
	}
	checkStatsAgainstLog(t, "SM7_QV100", powerless(run.realRun, names), filepath.Join(data, "work", "runs", id, "accel-sim.log"))

	// The kernels CSV and the configs compared have the same figures.
	for _, url := range []string{"/runs/" + id + "/kernels.csv", "/traces/vecadd/configs.csv"} {
		rows := getCSV(t, "http://"+addr+url)
		if len(rows) < 2 {
			t.Fatalf("%s: %d rows", url, len(rows))
		}
		for col, w := range map[string]float64{"power": 83.1298, "energy": energy, "power_dram": 13.4299} {
			i := slices.Index(rows[0], col)
			if i < 0 {
				t.Fatalf("%s: no column %s in %v", url, col, rows[0])
			}
			for _, row := range rows[1:] {
				if got, err := strconv.ParseFloat(row[i], 64); err != nil || math.Abs(got-w) > 1e-9*w {
					t.Errorf("%s: %s = %q, want %v", url, col, row[i], w)
				}
			}
		}
	}
}

// powerless is r with only the statistics a run without power has: the
// log's counters, then the hit rates (those that are not power's).
func powerless(r realRun, names []string) realRun {
	keep := func(n string) bool {
		return n != "insts_per_joule" && n != "energy" && (len(n) < 5 || n[:5] != "power")
	}
	var out realRun = r
	out.StatCounters = nil
	out.Kernels = slices.Clone(r.Kernels)
	out.Kernels[0].StatValues = nil
	for i, n := range names {
		if keep(n) {
			out.StatCounters = append(out.StatCounters, struct{ Name string }{n})
			out.Kernels[0].StatValues = append(out.Kernels[0].StatValues, r.Kernels[0].StatValues[i])
		}
	}
	return out
}

func getCSV(t *testing.T, url string) [][]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s %s", url, resp.Status, b)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return rows
}
