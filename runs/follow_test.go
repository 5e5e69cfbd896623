package runs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simlog/simlogtest"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestFollowerStoresALongLogAsItReadsIt: a log read for the first time
// when it is long already (a batch job's, or any run's after a restart)
// is stored a megabyte's results at a time as it is read, every kernel
// once and in order, never the whole run's results at once.
func TestFollowerStoresALongLogAsItReadsIt(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		const n = 3000
		path := filepath.Join(t.TempDir(), "accel-sim.log")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		simlogtest.WriteLog(f, simlogtest.RealBlock(t), n, true)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		st := &fromStore{DB: d}
		m := saveManager(st)
		fl := newFollower(m, context.Background(), "r", path, n)
		any, reported := fl.read()
		if !any {
			t.Fatal("nothing read")
		}
		stored, most := 0, 0
		for i, from := range st.froms {
			if from != stored {
				t.Fatalf("save %d from %d, after %d stored", i, from, stored)
			}
			stored += st.lens[i]
			most = max(most, st.lens[i])
		}
		if stored != n-1 || len(st.froms) < 4 || most > n/4 {
			t.Errorf("%d kernels stored in %d saves of at most %d", stored, len(st.froms), most)
		}
		if reported != stored {
			t.Errorf("read reported %d kernels stored, the store got %d", reported, stored)
		}
		p := fl.Finish()
		if o := p.Outcome(simlog.Exit{}); !o.Succeeded { // as Judge does
			t.Fatal(o.Reason)
		}
		if _, err := m.kernels.save(context.Background(), "r", p.TakeAll); err != nil {
			t.Fatal(err)
		}
		ks, err := d.RunKernels(context.Background(), "r")
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range ks {
			if k.LaunchUID != i+1 || k.Stats == nil {
				t.Fatalf("kernel %d: %+v", i, k)
			}
		}
		if len(ks) != n {
			t.Errorf("%d kernels stored, want %d", len(ks), n)
		}
	})
}

// recorder keeps the runs published.
type recorder struct{ runs []cascade.Run }

func (r *recorder) Publish(e cascade.Event) {
	if u, ok := e.(cascade.RunUpdated); ok {
		r.runs = append(r.runs, u.Run)
	}
}

// TestKernelFinalAtTheNextLaunchIsPublished: on the real simulator's log
// a kernel's result becomes final when the next kernel launches, which
// changes no count of finished kernels; the run is published then all
// the same, so a subscriber's page shows that kernel while the next one
// runs (it stayed a kernel behind until the next kernel ended).
func TestKernelFinalAtTheNextLaunchIsPublished(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if err := d.CreateRuns(ctx, []cascade.Run{{ID: "r", TraceID: "t", SimConfig: "c", State: cascade.RunRunning}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "accelsim", "simstats", "testdata", "vecadd-x2-SM7_QV100.log"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		second := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "launching kernel name: _Z6vecAddPdS_S_i uid: 2") })
		path := filepath.Join(t.TempDir(), "accel-sim.log")
		var pub recorder
		m := saveManager(d)
		m.cfg.Events, m.coord = &pub, nobody{}
		fl := newFollower(m, ctx, "r", path, 2)
		for _, part := range [][]string{lines[:second], lines[second : second+1]} {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(strings.Join(part, "")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			fl.Grew()
		}
		if len(pub.runs) < 2 {
			t.Fatalf("%d updates published, want one for the first kernel's end and one for its result at the next launch", len(pub.runs))
		}
		last := pub.runs[len(pub.runs)-1]
		ks, err := d.RunKernels(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if last.KernelsDone != 1 || len(ks) != 1 || !last.UpdatedAt.After(pub.runs[0].UpdatedAt) {
			t.Errorf("last update: %d kernels done, updated %v after %v; %d kernels stored", last.KernelsDone, last.UpdatedAt, pub.runs[0].UpdatedAt, len(ks))
		}
	})
}
