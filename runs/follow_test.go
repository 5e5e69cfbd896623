package runs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
		if !fl.read() {
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
		p := fl.Finish()
		if o := p.Outcome(simlog.Exit{}); !o.Succeeded { // as Judge does
			t.Fatal(o.Reason)
		}
		if err := m.kernels.save(context.Background(), "r", p.TakeAll); err != nil {
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
