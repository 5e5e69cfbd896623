package runs

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestRecordPowerPages: the report is read into the stored kernels a page
// at a time, matched by launch uid whatever the report's order; a kernel
// the report has no block for, or without a uid, has power absent; the
// log's values stay as stored; a run without a report is left as it was.
func TestRecordPowerPages(t *testing.T) {
	old := powerPageSize
	powerPageSize = 2
	t.Cleanup(func() { powerPageSize = old })
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		m := saveManager(d)
		m.cfg.WorkDir = t.TempDir()
		if err := d.SaveTrace(ctx, &cascade.Trace{ID: "t", State: cascade.TraceReady}); err != nil {
			t.Fatal(err)
		}
		if err := d.CreateRuns(ctx, []cascade.Run{{ID: "r", TraceID: "t", SimConfig: "c", State: cascade.RunRunning, Figures: cascade.RunFigures{CoreClockMHz: 1000}}}); err != nil {
			t.Fatal(err)
		}
		tab := m.cfg.StatsTable
		uids := []int{1, 2, 3, 0, 5}
		ks := make([]cascade.RunKernel, len(uids))
		for i, u := range uids {
			v := make(simstats.Values, len(tab.Counters))
			for j := range v {
				v[j] = float64(100*i + j)
			}
			ks[i] = cascade.RunKernel{Name: "k", TraceFile: "kernel.traceg", LaunchUID: u, SimCycles: 1000, Stats: simstats.Encode(nil, v)}
		}
		if err := d.SaveRunKernels(ctx, "r", ks); err != nil {
			t.Fatal(err)
		}
		if c, err := m.recordPower(ctx, "r"); c != nil || err != nil {
			t.Fatalf("without a report: %v, %v", c, err)
		}

		// Blocks for uids 3, 1, 2 (out of order) and 9; none for 5.
		report := ""
		for _, b := range []struct {
			uid   int
			power string
		}{{3, "30"}, {1, "10"}, {2, "20"}, {9, "90"}} {
			report += "kernel_name = k \nkernel_launch_uid = " + strconv.Itoa(b.uid) + " \n\nKernel Average Power Data:\nkernel_avg_power = " + b.power + "\ngpu_avg_DRAMP, = 1\n\n"
		}
		if err := os.MkdirAll(m.runDir("r"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(m.runDir("r"), accelwattch.ReportName), []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
		counters, err := m.recordPower(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if len(counters) != len(tab.Counters)+len(accelwattch.Counters()) || counters[len(tab.Counters)].Name != "power" {
			t.Fatalf("counters %v", counters)
		}
		ptab, err := StatTable(cascade.Run{StatCounters: counters})
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.RunKernels(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{10, 20, 30, math.NaN(), math.NaN()}
		for i, k := range got {
			v, err := DecodeStats(ptab, k)
			if err != nil {
				t.Fatal(err)
			}
			if v[0] != float64(100*i) || v[len(tab.Counters)-1] != float64(100*i+len(tab.Counters)-1) {
				t.Errorf("kernel %d: the log's values changed: %v", i, v[:len(tab.Counters)])
			}
			p, e := v[ptab.Index("power")], v[ptab.Index("energy")]
			if w := want[i]; (math.IsNaN(w) && simstats.Present(p)) || (!math.IsNaN(w) && (p != w || e != w*1000/1e9)) {
				t.Errorf("kernel %d (uid %d): power %v energy %v, want %v W", i, uids[i], p, e, w)
			}
		}
	})
}
