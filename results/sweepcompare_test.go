package results_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/tracedir"
)

// countingStore counts the runs whose kernel results are read.
type countingStore struct {
	*db.DB
	runKernels atomic.Int64
}

func (s *countingStore) RunKernels(ctx context.Context, runID string) ([]cascade.RunKernel, error) {
	s.runKernels.Add(1)
	return s.DB.RunKernels(ctx, runID)
}

// comparisonRig is a sweep of stored runs over traces with the
// quickstart's timing files ("none": without any) and two configs, and a
// Reader to compare it.
type comparisonRig struct {
	tb      testing.TB
	d       *db.DB
	store   *countingStore
	m       *results.Reader
	bucket  string
	sweep   cascade.Sweep
	configs configsDir
	runs    []cascade.Run // in launch order
	rng     *rand.Rand
}

func newComparisonRig(tb testing.TB, d *db.DB, traces []string) *comparisonRig {
	ctx := context.Background()
	c := &comparisonRig{tb: tb, d: d, store: &countingStore{DB: d}, bucket: tb.TempDir(), rng: rand.New(rand.NewPCG(1, 2))}
	for _, id := range traces {
		tr := cascade.Trace{ID: id, State: cascade.TraceReady, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}}
		if id != "none" {
			for _, f := range []string{"real_timing.json", tracedir.TimelineFile, tracedir.KernelMappingFile} {
				testkit.CopyFile(tb, filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", f), filepath.Join(c.bucket, id, f))
			}
			tr.HasRealTiming, tr.HasStepTimeline = true, true
		}
		if err := d.SaveTrace(ctx, &tr); err != nil {
			tb.Fatal(err)
		}
	}
	configs := []string{simconfigtest.H100, simconfigtest.RTX3070}
	c.m = c.manager(c.store)
	c.sweep = cascade.Sweep{ID: "s1", TraceIDs: traces, SimConfigs: configs, Executor: "local"}
	for _, tr := range traces {
		for _, cfg := range configs {
			c.runs = append(c.runs, cascade.Run{ID: fmt.Sprintf("r%d", len(c.runs)), TraceID: tr, SimConfig: cfg, State: cascade.RunQueued, Executor: "local", History: []string{}})
		}
	}
	if err := d.CreateSweep(ctx, &c.sweep, c.runs); err != nil {
		tb.Fatal(err)
	}
	return c
}

// manager is a new Reader of the rig's traces and configs on store.
func (c *comparisonRig) manager(store results.Store) *results.Reader {
	if c.configs == "" {
		c.configs = configsDir(simconfigtest.Write(c.tb, c.tb.TempDir(), c.sweep.SimConfigs...))
	}
	return results.New(results.Config{Store: store, BucketDir: c.bucket, Configs: c.configs})
}

// configsDir lists the configs of a directory, as they are now.
type configsDir string

func (d configsDir) SimConfigs() ([]cascade.SimConfig, error) { return simconfig.Load(string(d)) }
func (d configsDir) Gone() string                             { return "no longer in " + string(d) }

// end stores kernel results for r, four kernels of random simulated
// cycles, and ends it in state.
func (c *comparisonRig) end(r cascade.Run, state cascade.RunState) {
	c.tb.Helper()
	ctx := context.Background()
	var ks []cascade.RunKernel
	for id := 1; id <= 4; id++ {
		ks = append(ks, cascade.RunKernel{
			KernelID: cascade.Ptr(id), Context: cascade.Ptr("0x55d2c3a1e4f0"), Name: fmt.Sprintf("k%d", id),
			TraceFile: fmt.Sprintf("kernel-%d-ctx_0x55d2c3a1e4f0.traceg", id), SimCycles: 1000 + c.rng.Int64N(20000),
		})
	}
	if err := c.d.SaveRunKernels(ctx, r.ID, ks); err != nil {
		c.tb.Fatal(err)
	}
	if _, _, err := c.d.UpdateRun(ctx, r.ID, func(r *cascade.Run) error { r.State = state; return nil }); err != nil {
		c.tb.Fatal(err)
	}
}

// TestSweepComparisonAddsEachRunOnce: as the runs of a sweep (3 traces
// with the quickstart's timing files, one without any, × 2 configs, each
// run its own simulated cycles) succeed or fail one by one in a shuffled
// order, each call of SweepComparison reads the kernel results of the run
// that succeeded since and no other, and its figures equal those pooled
// afresh from every succeeded run's results. They still do after a
// succeeded run changes, after one is removed, and after a trace's timing
// changes and then a run of it succeeds.
func TestSweepComparisonAddsEachRunOnce(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		c := newComparisonRig(t, d, []string{"ta", "tb", "tc", "none"})
		m, store, s, rs, end, bucket := c.m, c.store, c.sweep, c.runs, c.end, c.bucket
		oracle := c.manager(d) // no caches shared with m
		// check calls SweepComparison and wants it to read the kernel
		// results of reads runs and to give what is pooled afresh.
		check := func(what string, reads int64) {
			t.Helper()
			before := store.runKernels.Load()
			got, err := m.SweepComparison(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n := store.runKernels.Load() - before; n != reads {
				t.Errorf("%s: read the kernel results of %d runs, want %d", what, n, reads)
			}
			if want := pooledAfresh(t, oracle, d, s); !sameComparison(got, want) {
				t.Fatalf("%s:\n got %s\nwant %s", what, showComparison(got), showComparison(want))
			}
		}

		check("nothing over", 0)
		last := rs[0] // a run of ta, left for the end
		c.rng.Shuffle(len(rs)-1, func(i, j int) { rs[i+1], rs[j+1] = rs[j+1], rs[i+1] })
		for i, r := range rs[1:] {
			switch {
			case i%4 == 3 && r.TraceID != "ta": // ta's other run succeeds: see the end
				end(r, cascade.RunFailed)
				check(r.ID+" failed", 0)
			case r.TraceID == "none":
				end(r, cascade.RunSucceeded)
				check(r.ID+" succeeded without timing", 0)
			default:
				end(r, cascade.RunSucceeded)
				check(r.ID+" succeeded", 1)
			}
			check("again, nothing new", 0)
		}
		rs, err := d.SweepRuns(ctx, s.ID, cascade.RunSucceeded)
		if err != nil {
			t.Fatal(err)
		}
		withTiming := func(rs []cascade.Run) (n int64) {
			for _, r := range rs {
				if r.TraceID != "none" {
					n++
				}
			}
			return n
		}
		// A succeeded run that changes (here: its label) starts the pools again.
		if _, _, err := d.UpdateRun(ctx, rs[0].ID, func(r *cascade.Run) error { r.Label = cascade.Ptr("relabelled"); return nil }); err != nil {
			t.Fatal(err)
		}
		check("a run relabelled", withTiming(rs))
		if err := d.DeleteRuns(ctx, []string{rs[1].ID}); err != nil {
			t.Fatal(err)
		}
		check("a run removed", withTiming(rs[2:])+withTiming(rs[:1]))
		// ta loses its real timing; once its last run succeeds, every run
		// of it is compared without.
		if err := os.Remove(filepath.Join(bucket, "ta", "real_timing.json")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.UpdateTrace(ctx, "ta", func(tr *cascade.Trace, _ bool) error { tr.HasRealTiming = false; return nil }); err != nil {
			t.Fatal(err)
		}
		end(last, cascade.RunSucceeded)
		check("ta's timing gone and its last run succeeded", withTiming(rs[2:])+withTiming(rs[:1])+1)
	})
}

// BenchmarkSweepComparison: the runs of a sweep of 100 traces × 2
// configs succeed one by one, SweepComparison called after each, as the
// sweep page does (on SQLite). It reports the time of the calls per run
// and how many runs' kernel results they read.
//
//	go test ./runs -run '^$' -bench SweepComparison -benchtime 3x -cpuprofile cpu.out
func BenchmarkSweepComparison(b *testing.B) {
	traces := make([]string, 100)
	for i := range traces {
		traces[i] = fmt.Sprintf("t%03d", i)
	}
	ctx := context.Background()
	reads := int64(0)
	for b.Loop() {
		b.StopTimer()
		c := newComparisonRig(b, dbtest.DB(b), traces)
		b.StartTimer()
		for _, r := range c.runs {
			b.StopTimer()
			c.end(r, cascade.RunSucceeded)
			b.StartTimer()
			if _, err := c.m.SweepComparison(ctx, c.sweep.ID); err != nil {
				b.Fatal(err)
			}
		}
		reads += c.store.runKernels.Load()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*2*len(traces)), "µs/run")
	b.ReportMetric(float64(reads)/float64(b.N), "kernel-reads/op")
}

// pooledAfresh pools the results of the sweep's succeeded runs by config,
// as [cascade.SweepConfigComparison] defines it, from each run's own
// results, the correlation from the deviations from the pooled means.
func pooledAfresh(t *testing.T, m *results.Reader, d *db.DB, s cascade.Sweep) []cascade.SweepConfigComparison {
	t.Helper()
	ctx := context.Background()
	rs, err := d.SweepRuns(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []cascade.SweepConfigComparison
	for _, name := range s.SimConfigs {
		c := cascade.SweepConfigComparison{SimConfig: name}
		var xs, ys []float64
		var absErr, stepAbsErr float64
		for _, r := range rs {
			if r.SimConfig != name {
				continue
			}
			c.Runs++
			if r.State != cascade.RunSucceeded {
				continue
			}
			c.Succeeded++
			res, err := m.Read(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Comparison != nil {
				c.Compared++
				for _, k := range res.Kernels {
					if k.ErrorPct != nil {
						absErr += math.Abs(*k.ErrorPct)
						xs, ys = append(xs, *k.SimTimeNs), append(ys, *k.MeasuredNs)
					}
				}
			}
			for _, st := range res.Steps {
				if st.EventsReplaced > 0 && st.MeasuredNs > 0 {
					c.StepsCompared++
					stepAbsErr += 100 * math.Abs(st.ProjectedNs-st.MeasuredNs) / st.MeasuredNs
				}
			}
		}
		if c.KernelsCompared = len(xs); c.KernelsCompared > 0 {
			c.MAPE = cascade.Ptr(absErr / float64(len(xs)))
			mx, my := meanOf(xs), meanOf(ys)
			var sxy, sxx, syy float64
			for i := range xs {
				sxy += (xs[i] - mx) * (ys[i] - my)
				sxx += (xs[i] - mx) * (xs[i] - mx)
				syy += (ys[i] - my) * (ys[i] - my)
			}
			if len(xs) > 1 && sxx > 0 && syy > 0 {
				c.Correlation = cascade.Ptr(sxy / math.Sqrt(sxx*syy))
			}
		}
		if c.StepsCompared > 0 {
			c.StepMAPE = cascade.Ptr(stepAbsErr / float64(c.StepsCompared))
		}
		out = append(out, c)
	}
	return out
}

func meanOf(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// sameComparison says whether a and b have the same counts and figures,
// the figures to 1e-9 of their size (they are sums taken in another
// order).
func sameComparison(a, b []cascade.SweepConfigComparison) bool {
	near := func(x, y *float64) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return math.Abs(*x-*y) <= 1e-9*math.Max(1, math.Abs(*y))
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.SimConfig != y.SimConfig || x.Runs != y.Runs || x.Succeeded != y.Succeeded || x.Compared != y.Compared ||
			x.KernelsCompared != y.KernelsCompared || x.StepsCompared != y.StepsCompared ||
			!near(x.MAPE, y.MAPE) || !near(x.Correlation, y.Correlation) || !near(x.StepMAPE, y.StepMAPE) {
			return false
		}
	}
	return true
}

func showComparison(cs []cascade.SweepConfigComparison) string {
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("{%s runs %d succeeded %d compared %d kernels %d steps %d mape %v r %v stepMape %v} ",
			c.SimConfig, c.Runs, c.Succeeded, c.Compared, c.KernelsCompared, c.StepsCompared, show(c.MAPE), show(c.Correlation), show(c.StepMAPE))
	}
	return s
}

// show is *p, or "-" for nil.
func show(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
