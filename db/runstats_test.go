package db_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestRunStatisticsAndFigures: a run's counters, failure class and own
// figures, and its kernels' encoded statistics, come back as saved.
func TestRunStatisticsAndFigures(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		r := &cascade.Run{ID: "r1", TraceID: "t", SimConfig: "SM7_QV100", State: cascade.RunFailed, Executor: "local",
			StatCounters: []cascade.StatCounter{{Name: "cycles", Kind: "aggregate", Unit: "cycles"}, {Name: "ipc", Kind: "kernel", Unit: "insts/cycle"}},
			FailureClass: cascade.FailureDeadlock,
			Figures: cascade.RunFigures{CoreClockMHz: 1132, WallSeconds: 12.5, PeakRSSBytes: 1 << 30,
				SimulatorBuild: "Accel-Sim [build x]", SimulatorSum: "s1", ConfigSum: "c1", TraceSum: "t1"},
		}
		if err := d.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		stats := []byte{1, 2, 3, 0, 255}
		ks := []cascade.RunKernel{{Name: "k", TraceFile: "kernel-1.traceg", SimCycles: 8823, Stats: stats}, {Name: "k2", TraceFile: "kernel-2.traceg"}}
		if err := d.SaveRunKernels(ctx, "r1", ks); err != nil {
			t.Fatal(err)
		}
		got, err := d.Run(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.StatCounters) != 2 || got.StatCounters[1] != r.StatCounters[1] || got.FailureClass != cascade.FailureDeadlock || got.Figures != r.Figures {
			t.Errorf("run: %+v", got)
		}
		upd, saved, err := d.UpdateRun(ctx, "r1", func(r *cascade.Run) error {
			r.Figures.PeakRSSBytes, r.FailureClass = 42, cascade.FailureOutOfMemory
			return nil
		})
		if err != nil || !saved {
			t.Fatal(saved, err)
		}
		if got, _ := d.Run(ctx, "r1"); got.Figures.PeakRSSBytes != 42 || got.FailureClass != cascade.FailureOutOfMemory || got.Figures.ConfigSum != "c1" || upd.Figures != got.Figures {
			t.Errorf("after UpdateRun: %+v", got)
		}
		kk, err := d.RunKernels(ctx, "r1")
		if err != nil || len(kk) != 2 {
			t.Fatalf("kernels: %v, %v", kk, err)
		}
		if !bytes.Equal(kk[0].Stats, stats) || kk[1].Stats != nil {
			t.Errorf("stats: %v, %v", kk[0].Stats, kk[1].Stats)
		}
	})
}

// TestRunsByFailureClass: the runs list narrows to one failure class.
func TestRunsByFailureClass(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		for i, c := range []cascade.FailureClass{cascade.FailureDeadlock, "", cascade.FailureDeadlock, cascade.FailureCancelled, cascade.FailureAssertion} {
			r := &cascade.Run{ID: fmt.Sprintf("r%d", i+1), TraceID: "t", SimConfig: "c", State: cascade.RunFailed, Executor: "local",
				FailureClass: c, FailureLine: "line of r" + strconv.Itoa(i+1)}
			if err := d.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(f cascade.RunFilter) []string {
			t.Helper()
			p, err := d.Runs(ctx, f, cascade.Page{First: cascade.DefaultPageSize, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range p.Items {
				out = append(out, r.ID)
			}
			if int(p.Total) != len(out) {
				t.Errorf("total %d, %d items", p.Total, len(out))
			}
			return out
		}
		if got := ids(cascade.RunFilter{FailureClass: cascade.FailureDeadlock}); !slices.Equal(got, []string{"r3", "r1"}) {
			t.Errorf("DEADLOCK: %v, want [r3 r1]", got)
		}
		if got := ids(cascade.RunFilter{FailureClass: cascade.FailureOutOfMemory}); len(got) != 0 {
			t.Errorf("OUT_OF_MEMORY: %v, want none", got)
		}
		if got := ids(cascade.RunFilter{}); len(got) != 5 {
			t.Errorf("no filter: %v, want every run", got)
		}
		if r, _ := d.Run(ctx, "r3"); r.FailureLine != "line of r3" {
			t.Errorf("failure line %q", r.FailureLine)
		}
	})
}

// TestRunKernelPage: a run's kernels come a page at a time, in launch
// order, each page after the cursor of the last one's last kernel, and
// none of another run's.
func TestRunKernelPage(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			if err := d.CreateRun(ctx, &cascade.Run{ID: id, TraceID: "t", SimConfig: "c", State: cascade.RunSucceeded, Executor: "local"}); err != nil {
				t.Fatal(err)
			}
		}
		const n = 1203
		ks := make([]cascade.RunKernel, n)
		for i := range ks {
			ks[i] = cascade.RunKernel{Name: "k" + strconv.Itoa(i), TraceFile: "f", SimCycles: int64(i), Stats: []byte{1, byte(2 * i % 128)}}
		}
		if err := d.SaveRunKernels(ctx, "a", ks); err != nil {
			t.Fatal(err)
		}
		if err := d.SaveRunKernels(ctx, "b", ks[:3]); err != nil {
			t.Fatal(err)
		}
		var got []cascade.RunKernel
		p := cascade.Page{First: 500, Count: true}
		pages := 0
		for {
			page, err := d.RunKernelPage(ctx, "a", p)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if page.Total != n {
				t.Errorf("page %d: total %d, want %d", pages, page.Total, n)
			}
			got = append(got, page.Items...)
			if !page.HasNext {
				break
			}
			if pages > 10 {
				t.Fatal("pages never end")
			}
			p.After = cascade.Cursor(int64(page.Items[len(page.Items)-1].Seq))
		}
		if pages != 3 || len(got) != n {
			t.Fatalf("%d pages of %d kernels, want 3 of %d", pages, len(got), n)
		}
		for i, k := range got {
			if k.RunID != "a" || k.Seq != i || k.Name != "k"+strconv.Itoa(i) || !bytes.Equal(k.Stats, ks[i].Stats) {
				t.Fatalf("kernel %d: %+v", i, k)
			}
		}
		if _, err := d.RunKernelPage(ctx, "a", cascade.Page{After: "nonsense"}); cascade.ErrorCode(err) != cascade.EINVALID {
			t.Errorf("a bad cursor: %v", err)
		}
		if page, err := d.RunKernelPage(ctx, "none", cascade.Page{}); err != nil || len(page.Items) != 0 || page.HasNext {
			t.Errorf("a run without kernels: %+v, %v", page, err)
		}
	})
}

// TestPeakRSS: the largest peak of a config's last runs that recorded one,
// of one trace or of any; runs without a peak, of other configs, and
// older than the last few do not count.
func TestPeakRSS(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		add := func(id, trace, config string, peak int64) {
			t.Helper()
			r := &cascade.Run{ID: id, TraceID: trace, SimConfig: config, State: cascade.RunSucceeded, Executor: "local",
				Figures: cascade.RunFigures{PeakRSSBytes: peak}}
			if err := d.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := d.PeakRSS(ctx, "SM7_QV100", "", 5); err != nil || got != 0 {
			t.Fatalf("no runs: %d, %v; want 0", got, err)
		}
		add("old", "a", "SM7_QV100", 9<<30) // older than the last 2 of the config
		add("a1", "a", "SM7_QV100", 3<<30)
		add("b1", "b", "SM7_QV100", 1<<30)
		add("a2", "a", "SM7_QV100", 0) // recorded none: does not count
		add("c1", "a", "SM6_TITANX", 7<<30)
		for _, tt := range []struct {
			trace  string
			recent int
			want   int64
		}{{"", 2, 3 << 30}, {"", 3, 9 << 30}, {"b", 5, 1 << 30}, {"a", 1, 3 << 30}, {"a", 2, 9 << 30}, {"z", 5, 0}} {
			if got, err := d.PeakRSS(ctx, "SM7_QV100", tt.trace, tt.recent); err != nil || got != tt.want {
				t.Errorf("PeakRSS(SM7_QV100, %q, %d) = %d, %v; want %d", tt.trace, tt.recent, got, err, tt.want)
			}
		}
	})
}
