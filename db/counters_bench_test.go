package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// BenchmarkReplaceKernelCounters400k stores 100,000 kernels' counters of
// four statistics each (what reading their profiles gives) on each
// database, reporting the time a counter.
func BenchmarkReplaceKernelCounters400k(b *testing.B) {
	cs := benchCounters()
	eachBenchDB(b, func(b *testing.B, ctx context.Context, d *db.DB) {
		b.ResetTimer()
		for range b.N {
			if err := d.ReplaceKernelCounters(ctx, "t", cs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cs)), "ns/counter")
	})
}

// benchCounters are 100,000 kernels' counters of four statistics each,
// as reading their profiles gives them.
func benchCounters() []cascade.KernelCounter {
	const kernels, stats = 100_000, 4
	names := []string{"cycles", "warp_instructions", "dram_reads", "l2_read_hits"}
	cs := make([]cascade.KernelCounter, 0, kernels*stats)
	for i := range kernels {
		for j := range stats {
			v := float64(1000 + (i*7+j)%500)
			cs = append(cs, cascade.KernelCounter{Seq: i, Stat: names[j], Mean: v, Min: v, Max: v, Count: 2})
		}
	}
	return cs
}

// BenchmarkKernelCounters400k reads back the counters
// BenchmarkReplaceKernelCounters400k stores, all in one read and in
// reads of 1,000 kernels (a page), on each database, reporting the time
// a counter.
func BenchmarkKernelCounters400k(b *testing.B) {
	cs := benchCounters()
	eachBenchDB(b, func(b *testing.B, ctx context.Context, d *db.DB) {
		if err := d.ReplaceKernelCounters(ctx, "t", cs); err != nil {
			b.Fatal(err)
		}
		for _, page := range []int{100_000, 1000} {
			b.Run(fmt.Sprintf("by%d", page), func(b *testing.B) {
				for range b.N {
					n := 0
					for from := 0; from < 100_000; from += page {
						got, err := d.KernelCounters(ctx, "t", from, from+page)
						if err != nil {
							b.Fatal(err)
						}
						n += len(got)
					}
					if n != len(cs) {
						b.Fatalf("%d counters read", n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cs)), "ns/counter")
			})
		}
	})
}

// eachBenchDB runs fn as a sub-benchmark on a fresh SQLite database and,
// when dbtest.PostgresEnv is set, on a fresh PostgreSQL schema, each
// holding a ready trace "t".
func eachBenchDB(b *testing.B, fn func(b *testing.B, ctx context.Context, d *db.DB)) {
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			if u == "" {
				dbtest.SeedSQLite(b, dir)
			}
			d, err := db.Open(context.Background(), db.Config{URL: u, DataDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			if err := d.SaveTrace(ctx, &cascade.Trace{ID: "t", State: cascade.TraceReady, Prompts: []string{}, Warnings: []string{}}); err != nil {
				b.Fatal(err)
			}
			fn(b, ctx, d)
		})
	}
}
