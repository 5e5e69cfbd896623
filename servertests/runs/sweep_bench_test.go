package runs_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// twelveConfigs writes 12 configs, copies of the H100 one named
// SM90_H100_v00 ... SM90_H100_v11, into a new directory; it returns the
// directory and the names.
func twelveConfigs(b *testing.B) (string, []string) {
	dir := b.TempDir()
	files, err := fs.ReadDir(samples.SimConfigs, "sim-configs/"+simconfigtest.H100)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for i := range 12 {
		name := fmt.Sprintf("%s_v%02d", simconfigtest.H100, i)
		names = append(names, name)
		for _, f := range files {
			data, err := fs.ReadFile(samples.SimConfigs, "sim-configs/"+simconfigtest.H100+"/"+f.Name())
			if err != nil {
				b.Fatal(err)
			}
			simconfigtest.WriteFile(b, filepath.Join(dir, name, f.Name()), string(data))
		}
	}
	return dir, names
}

// BenchmarkLaunchSweep launches a sweep of 3,600 runs (300 traces × 12
// configs) with launchSweep, on SQLite and, with CASCADE_TEST_POSTGRES_DSN
// set, on PostgreSQL, with the local executor (one simulation at a time,
// each sleeping an hour: the runs stay queued) and with the Slurm
// executor on the test cluster (its partition down: the jobs stay
// pending, and are cancelled after). It reports the mutation's time
// (checking 300 traces and 12 configs, storing the sweep in one
// transaction, queueing), with Slurm the time until every run's job is
// submitted and recorded, and the largest latency of a trivial query
// (one trace) sent every 10 ms by another client from the launch until
// then: whether the server stays responsive. How long the transaction
// holds the database writer is BenchmarkCreateSweep in package db.
//
//	go test ./runs -run '^$' -bench LaunchSweep -benchtime 1x -timeout 60m -v
func BenchmarkLaunchSweep(b *testing.B) {
	dsns := dbtest.DatabaseURLs(b)
	for _, dbName := range []string{"sqlite", "postgres"} {
		for _, executor := range []string{"local", "slurm"} {
			b.Run(dbName+"/"+executor, func(b *testing.B) {
				u, ok := dsns[dbName]
				if !ok {
					b.Skip("no " + dbtest.PostgresEnv)
				}
				benchLaunchSweep(b, u, executor)
			})
		}
	}
}

func benchLaunchSweep(b *testing.B, dsn, executor string) {
	const traces = 300
	cfgDir, configs := twelveConfigs(b)
	sim := fakesim.Build(b)
	configure := func(c *app.Config) {
		c.DatabaseURL = dsn
		c.SimConfigsDir = cfgDir
		c.SimCmd = []string{"env", "FAKESIM_MODE=slow", "FAKESIM_DELAY=1h", sim}
		c.RunConcurrency = 1
		c.Logger = nil
	}
	if executor == "slurm" {
		c := slurmtest.Start(b)
		c.Command(b, "scontrol", "update", "PartitionName=long", "State=DOWN")
		b.Cleanup(func() {
			c.Try("scancel", "--partition=long")
			c.Try("scontrol", "update", "PartitionName=long", "State=UP")
		})
		local := configure
		configure = func(cfg *app.Config) {
			local(cfg)
			cfg.Executor = "slurm"
			cfg.Slurm = slurm.Config{Env: []string{"SLURM_CONF=" + c.Conf()}, Timeout: time.Minute}
			cfg.Slurm.Options.Partition = "long"
		}
	}
	s := servertest.Server(b, configure)
	uploadQuickstart(b, s)
	ids := uploadCopies(b, s, traces)

	for b.Loop() {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var maxLatency time.Duration
		probes := 0
		wg.Go(func() {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				start := time.Now()
				var r struct{ Trace struct{ State string } }
				s.MustDo(b, `{ trace(id: "qs") { state } }`, nil, &r)
				maxLatency = max(maxLatency, time.Since(start))
				probes++
			}
		})
		writes := s.DB.WriteTransactions()
		start := time.Now()
		var r struct{ LaunchSweep struct{ ID string } }
		s.MustDo(b, `mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"traceIds": ids, "simConfigs": configs}}, &r)
		launched := time.Since(start)
		b.ReportMetric(float64(launched.Milliseconds()), "ms-launch")
		if executor == "slurm" {
			testkit.Eventually(b, 50*time.Minute, "every run submitted", func() bool {
				rs, err := s.DB.SweepRuns(context.Background(), r.LaunchSweep.ID, cascade.RunQueued)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range rs {
					if r.Slurm.JobID == nil {
						return false
					}
				}
				return len(rs) == traces*len(configs)
			})
			b.ReportMetric(time.Since(start).Seconds(), "s-all-submitted")
		}
		// The database load: the sweep's transaction, and under Slurm one
		// per submission plus the polls' (uploads and scans are over).
		b.ReportMetric(float64(s.DB.WriteTransactions()-writes), "db-write-txns")
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(maxLatency.Milliseconds()), "ms-max-query-latency")
		p, err := s.DB.SweepProgress(context.Background(), r.LaunchSweep.ID)
		if err != nil || p.Total != traces*len(configs) {
			b.Fatalf("progress %+v, %v", p, err)
		}
		b.Logf("%d runs: launchSweep took %v; %d probe queries during the launch, the slowest %v",
			p.Total, launched.Round(time.Millisecond), probes, maxLatency.Round(time.Millisecond))
	}
}
