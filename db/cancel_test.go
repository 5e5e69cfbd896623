package db_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestCanceledWritesLeaveTheWriterUsable: writes whose context is canceled
// while they run (a client gone, the server stopping) either happen whole
// or fail; none reports success without having happened, and none leaves
// the write connection inside its transaction, where every later write on
// SQLite would fail and closing could not checkpoint ("database table is
// locked"). The SQLite driver skips a statement whose context is already
// done and reports it done: a skipped COMMIT once left the connection so.
func TestCanceledWritesLeaveTheWriterUsable(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		model := func(tr cascade.Trace) string {
			if tr.Model == nil {
				return ""
			}
			return *tr.Model
		}
		const writers = 2
		next := make([]int, writers)
		for round := range 300 {
			cctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("w%d", w)
					for cctx.Err() == nil {
						next[w]++
						want := fmt.Sprint(next[w])
						update := func(tr *cascade.Trace, found bool) (bool, error) {
							if !found {
								*tr = *newTrace(id)
							}
							tr.Model = &want
							return false, nil
						}
						// Both ways of writing: the batch on the driver's
						// connection, and GORM's transaction.
						var saved bool
						if next[w]%2 == 0 {
							res, err := d.UpdateTraces(cctx, []cascade.TraceWrite{{ID: id, Update: update}})
							saved = err == nil && res[0].Saved
						} else {
							_, ok, err := d.UpdateTraceAndKernels(cctx, id, update)
							saved = err == nil && ok
						}
						if !saved {
							continue
						}
						got, err := d.Trace(ctx, id)
						if err != nil {
							t.Errorf("round %d: read %s: %v", round, id, err)
							return
						}
						if model(got) != want {
							t.Errorf("round %d: the write of %q to %s reported saved, the trace holds %q", round, want, id, model(got))
						}
					}
				}()
			}
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			cancel()
			wg.Wait()
			if t.Failed() {
				return
			}
			after := fmt.Sprintf("after round %d", round)
			if _, err := d.UpdateTraces(ctx, []cascade.TraceWrite{{ID: "w0", Update: func(tr *cascade.Trace, found bool) (bool, error) {
				tr.Model = &after
				return false, nil
			}}}); err != nil {
				t.Fatalf("a write after round %d: %v", round, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	})
}
