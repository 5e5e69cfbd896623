package runs

import (
	"context"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// fromStore records where each AppendRunKernels started.
type fromStore struct {
	*db.DB
	froms []int
}

func (s *fromStore) AppendRunKernels(ctx context.Context, runID string, from int, ks []cascade.RunKernel) error {
	s.froms = append(s.froms, from)
	return s.DB.AppendRunKernels(ctx, runID, from, ks)
}

// TestSaveKernelsWritesTheChangedTail: progress saves write the kernels
// from the first one the parser added, moved or changed since the last
// save; the stored list is the parser's each time, and a Manager started
// again (fewer kernels in memory than stored) saves them all.
func TestSaveKernelsWritesTheChangedTail(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		st := &fromStore{DB: d}
		m := &Manager{cfg: Config{Store: st}}
		k := func(uid int, stats []byte) cascade.RunKernel {
			return cascade.RunKernel{Name: "k", TraceFile: "kernel-1.traceg", LaunchUID: uid, SimCycles: int64(10 * uid), Stats: stats}
		}
		k1, k2, k3 := k(1, []byte{1}), k(2, []byte{2}), k(3, nil)
		k3s, k4, k5 := k(3, []byte{3}), k(4, []byte{4}), k(5, []byte{5})
		k5t := k5
		k5t.Truncated = true
		steps := []struct {
			ks   []cascade.RunKernel
			from int
		}{
			{[]cascade.RunKernel{k1, k2, k3}, 0},
			{[]cascade.RunKernel{k1, k2, k3}, 3},           // unchanged
			{[]cascade.RunKernel{k1, k2, k3s, k5}, 2},      // k3's statistics came
			{[]cascade.RunKernel{k1, k2, k3s, k4, k5}, 3},  // k4 finished after k5
			{[]cascade.RunKernel{k1, k2, k3s, k4, k5t}, 4}, // the cycle limit cut k5
		}
		for i, s := range steps {
			st.froms = nil
			ks := append([]cascade.RunKernel(nil), s.ks...)
			if err := m.saveKernels(ctx, "r", ks); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(st.froms, []int{s.from}) {
				t.Errorf("step %d: saved from %v, want %d", i, st.froms, s.from)
			}
			checkStored(t, d, s.ks)
		}

		m = &Manager{cfg: Config{Store: st}} // a restart
		st.froms = nil
		if err := m.saveKernels(ctx, "r", []cascade.RunKernel{k1, k2}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st.froms, []int{0}) {
			t.Errorf("after a restart: saved from %v, want 0", st.froms)
		}
		checkStored(t, d, []cascade.RunKernel{k1, k2})
		m.forgetKernels("r")
		if len(m.saved) != 0 {
			t.Errorf("forgotten run still remembered: %v", m.saved)
		}
	})
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
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored %+v, want %+v", got, want)
	}
}
