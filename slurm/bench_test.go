package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
)

// BenchmarkPoll3600 measures one poll of a 3,600-run sweep waiting in the
// queue: 3,600 held jobs on the test cluster, all polled together (one
// squeue --json call each time), and squeue --json alone. The jobs are
// submitted first, four at a time, and cancelled after.
//
//	go test -run '^$' -bench Poll3600 -benchtime 20x ./slurm/
func BenchmarkPoll3600(b *testing.B) {
	const n = 3600
	c, cs := client(b)
	ctx := context.Background()
	ids := make([]slurm.JobID, n)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				j := job(b, fmt.Sprintf("bench-%d", i), "true")
				j.Hold = true
				id, err := c.Submit(ctx, j)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Cancel(ctx, ids...); err != nil {
			b.Errorf("cancel the benchmark's jobs: %v", err)
		}
	})
	b.Logf("submitted %d held jobs in %v", n, time.Since(start).Round(time.Millisecond))

	// The command alone, its output read and dropped, then a whole Poll:
	// the difference is decoding and matching.
	b.Run("squeue", func(b *testing.B) {
		size := 0
		for b.Loop() {
			cmd := exec.Command("squeue", "--json", "--states=all", "--me")
			cmd.Env = append(os.Environ(), c.Env...)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			size = len(out)
		}
		b.ReportMetric(float64(size)/1e6, "MB/output")
	})
	b.Run("Poll", func(b *testing.B) {
		before := cs.Count("squeue")
		for b.Loop() {
			sts, err := c.Poll(ctx, ids)
			if err != nil {
				b.Fatal(err)
			}
			if st := sts[ids[n-1]]; st.State != slurm.Pending || st.Reason != "JobHeldUser" {
				b.Fatalf("job %d: %+v, want PENDING (JobHeldUser)", ids[n-1], st)
			}
		}
		if got := cs.Count("squeue") - before; got != b.N {
			b.Fatalf("%d squeue calls for %d polls", got, b.N)
		}
		perPoll := b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(time.Minute)/float64(perPoll), "polls/min")
	})
}
