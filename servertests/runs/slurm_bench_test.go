package runs_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// benchServer is server for a benchmark: the stand-in simulator, the test
// configs, the quickstart trace, on the data directory dir.
func benchServer(b *testing.B, dir string, configure func(*app.Config)) *servertest.TestServer {
	sim := fakesim.Build(b)
	cfgDir := simconfigtest.Write(b, b.TempDir())
	s := servertest.Server(b, func(c *app.Config) {
		c.DataDir = dir
		c.SimCmd = []string{"env", "FAKESIM_MODE=ok", sim}
		c.SimConfigsDir = cfgDir
		c.Logger = nil // 3,600 runs' lines would drown the benchmark's
	}, configure)
	uploadQuickstart(b, s)
	return s
}

// BenchmarkSlurmPoll3600 measures the Slurm executor's polling with 3,600
// queued runs, each a pending job on the test cluster (their partition is
// set DOWN, so none starts): squeue calls a minute at the default poll
// interval, and with polls back to back (an interval of 1 ms), which
// gives the time of one poll round over 3,600 jobs. It reports the launch
// and submission of the 3,600 runs too. The jobs are cancelled after.
//
//	go test ./runs -run '^$' -bench SlurmPoll3600 -benchtime 1x -timeout 30m -v
func BenchmarkSlurmPoll3600(b *testing.B) {
	const n = 3600
	c := slurmtest.Start(b)
	c.Command(b, "scontrol", "update", "PartitionName=long", "State=DOWN")
	b.Cleanup(func() {
		c.Try("scancel", "--partition=long")
		c.Try("scontrol", "update", "PartitionName=long", "State=UP")
	})
	dir := b.TempDir()
	serve := func(interval time.Duration) (*servertest.TestServer, func() int) {
		calls := slurmtest.CountingBin(b)
		s := benchServer(b, dir, func(cfg *app.Config) {
			cfg.Executor = "slurm"
			cfg.Slurm = slurm.Config{Bin: calls.Dir, Env: []string{"SLURM_CONF=" + c.Conf()}, PollInterval: interval, Timeout: time.Minute}
			cfg.Slurm.Options.Partition = "long"
		})
		return s, func() int { return calls.Count("squeue") }
	}

	s, squeues := serve(0) // the default interval
	writes := s.DB.WriteTransactions()
	start := time.Now()
	ids := make([]string, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				var r struct{ LaunchRun struct{ ID string } }
				s.MustDo(b, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`,
					map[string]any{"in": map[string]any{"traceId": quickstartID, "simConfig": simconfigtest.H100}}, &r)
				ids[i] = r.LaunchRun.ID
			}
		})
	}
	wg.Wait()
	launched := time.Since(start)
	testkit.Eventually(b, 30*time.Minute, "every run submitted", func() bool {
		rs, err := s.DB.RunsInState(context.Background(), cascade.RunQueued)
		if err != nil {
			b.Fatal(err)
		}
		done := 0
		for _, r := range rs {
			if r.Slurm.JobID != nil {
				done++
			}
		}
		return done == n
	})
	submitted := time.Since(start)
	// The first polls after the submissions record each job's pending
	// reason: one transaction per poll (and 500 runs), none after.
	testkit.Eventually(b, 30*time.Minute, "every run's pending reason recorded", func() bool {
		rs, err := s.DB.RunsInState(context.Background(), cascade.RunQueued)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if r.Slurm.Reason == "" {
				return false
			}
		}
		return true
	})
	// The database load: a transaction per launch and per submission,
	// and the polls' few.
	w := s.DB.WriteTransactions() - writes
	b.ReportMetric(float64(w), "db-write-txns")
	b.Logf("%d runs launched in %v, all submitted after %v, every pending reason recorded after %v, with %d write transactions", n,
		launched.Round(time.Millisecond), submitted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), w)

	for b.Loop() {
		window := time.Minute
		before := squeues()
		time.Sleep(window) // the measurement window: polls happen on the server's clock
		perMin := float64(squeues()-before) / window.Minutes()
		b.ReportMetric(perMin, "squeue/min@10s")
		s.Close()

		fast, fastSqueues := serve(time.Millisecond)
		testkit.Eventually(b, 10*time.Minute, "first poll after the restart", func() bool { return fastSqueues() > 0 })
		before = fastSqueues()
		time.Sleep(window)
		calls := fastSqueues() - before
		b.ReportMetric(float64(calls)/window.Minutes(), "squeue/min@1ms")
		if calls > 0 {
			b.ReportMetric(float64(window.Milliseconds())/float64(calls), "ms/poll")
		}
		var r struct {
			Run struct {
				State string
				Slurm struct{ State, Reason string }
			}
		}
		fast.MustDo(b, fmt.Sprintf(`{ run(id: %q) { state slurm { state reason } } }`, ids[n-1]), nil, &r)
		if r.Run.State != "QUEUED" || r.Run.Slurm.State != "PENDING" {
			b.Fatalf("last run: %+v, want QUEUED, its job PENDING", r.Run)
		}
		b.Logf("last run's job: %s (%s)", r.Run.Slurm.State, r.Run.Slurm.Reason)
	}
}
