package runs_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simlog/simlogtest"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/runs"
)

// flakyStore fails the next kernelFails saves of run kernels and the next
// updateFails run updates, as a database whose connection was cut does.
type flakyStore struct {
	*db.DB
	kernelFails, updateFails atomic.Int64
}

var errAway = errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")

func (s *flakyStore) AppendRunKernels(ctx context.Context, id string, from int, ks []cascade.RunKernel) error {
	if s.kernelFails.Add(-1) >= 0 {
		return errAway
	}
	return s.DB.AppendRunKernels(ctx, id, from, ks)
}

func (s *flakyStore) UpdateRun(ctx context.Context, id string, fn func(*cascade.Run) error) (cascade.Run, bool, error) {
	if s.updateFails.Add(-1) >= 0 {
		return cascade.Run{}, false, errAway
	}
	return s.DB.UpdateRun(ctx, id, fn)
}

// TestFinishOutlastsTheDatabase: a run whose simulator succeeded while the
// database failed (QA cut the server's PostgreSQL connections as it
// stored the results) ends SUCCEEDED with every kernel once the database
// answers again; a run whose results cannot be stored within the retry
// budget ends FAILED saying so. Before, the first ended SUCCEEDED with no
// kernels (and later launches reused that empty result), or stayed
// RUNNING for ever without a simulator.
func TestFinishOutlastsTheDatabase(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	simlogtest.WriteLog(&log, simlogtest.RealBlock(t), 4, true)
	log.WriteString("GPGPU-Sim: *** exit detected ***\n")
	parsed := func() *simlog.Parser {
		p := simlog.NewParser(4)
		for _, l := range strings.Split(strings.TrimRight(log.String(), "\n"), "\n") {
			p.Line(l)
		}
		return p
	}
	for _, c := range []struct {
		name                     string
		kernelFails, updateFails int64
		state                    cascade.RunState
		kernels                  int
		error                    string
	}{
		{"kernels and end stored after failures", 3, 4, cascade.RunSucceeded, 4, ""},
		{"kernels never stored", 1 << 40, 0, cascade.RunFailed, 0, "its kernel results could not be stored: FATAL: terminating connection"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var st *flakyStore
			r := newManagerRigWith(t, 1, func(d *db.DB) runs.Store { st = &flakyStore{DB: d}; return st })
			r.m.SetRetry(time.Millisecond, 20*time.Millisecond, 300*time.Millisecond)
			r.run()
			a := r.launch()
			r.nextStart()
			r.running(a.ID)
			st.kernelFails.Store(c.kernelFails)
			st.updateFails.Store(c.updateFails)
			r.exec.turn(a.ID) <- func(ctx context.Context, h runs.Host) {
				h.Finish(ctx, a.ID, runs.End{State: cascade.RunSucceeded, Log: parsed()})
			}
			var got cascade.Run
			select {
			case got = <-r.ended:
			case <-time.After(30 * time.Second):
				t.Fatalf("no end stored; the run is %s", r.get(a.ID).State)
			}
			ks, err := r.d.RunKernels(context.Background(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != c.state || len(ks) != c.kernels || (c.error == "") != (got.Error == nil) || got.Error != nil && !strings.Contains(*got.Error, c.error) {
				t.Fatalf("run %s with %d kernels stored, error %v; want %s with %d, error %q", got.State, len(ks), got.Error, c.state, c.kernels, c.error)
			}
			if stored := r.get(a.ID); stored.State != c.state {
				t.Fatalf("stored %s, want %s", stored.State, c.state)
			}
		})
	}
}
