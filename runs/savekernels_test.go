package runs

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// fromStore records where each AppendRunKernels started and how many it
// stored, and fails the saves it is told to.
type fromStore struct {
	*db.DB
	froms, lens []int
	fail        int // saves to fail
}

func (s *fromStore) AppendRunKernels(ctx context.Context, runID string, from int, ks []cascade.RunKernel) error {
	if s.fail > 0 {
		s.fail--
		return errors.New("the database is away")
	}
	s.froms, s.lens = append(s.froms, from), append(s.lens, len(ks))
	return s.DB.AppendRunKernels(ctx, runID, from, ks)
}

// TestSaveKernelsAppendsWhatWasTaken: progress saves store the results
// taken from the parser since the last one after those stored, never a
// stored one again; the first save of a run replaces what was stored (a
// restart reads the log from the start); a failed save's results go with
// the next; and the run's totals follow the stored kernels, equal to those
// read back from the store.
func TestSaveKernelsAppendsWhatWasTaken(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		st := &fromStore{DB: d}
		m := saveManager(st)
		tab := m.cfg.StatsTable
		k := func(uid int) cascade.RunKernel {
			v := make(simstats.Values, len(tab.Counters))
			for i := range v {
				v[i] = float64(uid*100 + i)
			}
			v[1] = simstats.Absent
			return cascade.RunKernel{Name: "k", TraceFile: "kernel-1.traceg", LaunchUID: uid, SimCycles: int64(10 * uid), Stats: simstats.Encode(nil, v)}
		}
		chunk := func(uids ...int) func() []cascade.RunKernel {
			return func() []cascade.RunKernel {
				var ks []cascade.RunKernel
				for _, u := range uids {
					ks = append(ks, k(u))
				}
				return ks
			}
		}
		if err := d.SaveRunKernels(ctx, "r", []cascade.RunKernel{k(7), k(8), k(9)}); err != nil {
			t.Fatal(err) // what an earlier server stored
		}
		st.froms, st.lens = nil, nil
		steps := []struct {
			take       func() []cascade.RunKernel
			fail       int
			froms      []int
			lens       []int
			stored     int
			wantFailed bool
		}{
			{chunk(), 0, []int{0}, []int{0}, 0, false},     // nothing final yet: the old rows go
			{chunk(1, 2), 0, []int{0}, []int{2}, 2, false}, //
			{chunk(), 0, nil, nil, 2, false},               // nothing new: nothing written
			{chunk(3), 1, nil, nil, 2, true},               // the save fails
			{chunk(4, 5), 0, []int{2}, []int{3}, 5, false}, // 3 goes with 4 and 5
			{chunk(6), 0, []int{5}, []int{1}, 6, false},    //
		}
		for i, s := range steps {
			st.froms, st.lens, st.fail = nil, nil, s.fail
			_, err := m.kernels.save(ctx, "r", s.take)
			if (err != nil) != s.wantFailed {
				t.Fatalf("step %d: %v", i, err)
			}
			if !reflect.DeepEqual(st.froms, s.froms) || !reflect.DeepEqual(st.lens, s.lens) {
				t.Errorf("step %d: saved from %v, %v kernels; want %v, %v", i, st.froms, st.lens, s.froms, s.lens)
			}
			var want []cascade.RunKernel
			for u := 1; u <= s.stored; u++ {
				want = append(want, k(u))
			}
			checkStored(t, d, want)
		}

		r := cascade.Run{ID: "r", StatCounters: statCounters(tab)}
		live, ok := m.LiveTotals(r)
		if !ok {
			t.Fatal("no live totals of a run being saved")
		}
		m.kernels.forget("r")
		if len(m.kernels.runs) != 0 {
			t.Errorf("forgotten run still remembered: %v", m.kernels.runs)
		}
		if _, ok := m.LiveTotals(r); ok {
			t.Error("live totals of a forgotten run")
		}
		// The totals the read side adds up from the stored kernels.
		rt, err := StatTable(r)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := d.RunKernels(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		sum := NewTotaller(rt)
		if err := sum.Add(stored); err != nil {
			t.Fatal(err)
		}
		read := sum.Totals()
		if !sameTotals(live, read) || live.Kernels[0] != 6 || live.Kernels[1] != 0 {
			t.Errorf("totals followed %+v, read back %+v", live, read)
		}

		m = saveManager(st) // a restart: the log is read again
		st.froms = nil
		if _, err := m.kernels.save(ctx, "r", chunk(1, 2)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st.froms, []int{0}) {
			t.Errorf("after a restart: saved from %v, want 0", st.froms)
		}
		checkStored(t, d, []cascade.RunKernel{k(1), k(2)})
	})
}

// saveManager is a Manager with only what saving kernels needs.
func saveManager(st Store) *Manager {
	return &Manager{cfg: Config{Store: st, StatsTable: simstats.Builtin()}, kernels: newKernelSaves(st, simstats.Builtin())}
}

func sameTotals(a, b StatTotals) bool {
	if len(a.Values) != len(b.Values) || !reflect.DeepEqual(a.Kernels, b.Kernels) {
		return false
	}
	for i := range a.Values {
		if x, y := a.Values[i], b.Values[i]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

func checkStored(t *testing.T, d *db.DB, want []cascade.RunKernel) {
	t.Helper()
	got, err := d.RunKernels(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	want = append([]cascade.RunKernel(nil), want...)
	for i := range want {
		want[i].RunID, want[i].Seq = "r", i
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored %+v, want %+v", got, want)
	}
}
