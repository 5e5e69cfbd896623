package db_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// BenchmarkReplaceKernels1M replaces a trace's kernel list with 1,000,000
// kernels of 200 distinct names, handed over in batches of 2,000 as the
// stats reader does, and reports the time and CPU it took (s-cpu, the
// whole process), and the longest and the 99th percentile time another
// trace's row update waited meanwhile, one every 5 ms (ms-write-max,
// ms-write-p99). CASCADE_BENCH_CHUNK sets the rows of a chunk.
//
//	go test ./db -run '^$' -bench ReplaceKernels1M -benchtime 1x
func BenchmarkReplaceKernels1M(b *testing.B) {
	const n, batch = 1_000_000, 2000
	ctx := context.Background()
	names := make([][2]string, 200)
	for i := range names {
		names[i] = [2]string{fmt.Sprintf("_Z10kernel_%03dPfS_i", i), fmt.Sprintf("kernel_%03d(float*, float*, int)", i)}
	}
	files := make([]string, n)
	for i := range files {
		files[i] = fmt.Sprintf("kernel-%d-ctx_0x1.trace.xz", i+1)
	}
	kctx := "0x1"
	if c, err := strconv.Atoi(os.Getenv("CASCADE_BENCH_CHUNK")); err == nil {
		db.SetChunkRows(b, c)
	}
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			d, err := db.Open(ctx, db.Config{URL: u, DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			for _, id := range []string{"big", "other"} {
				if err := d.SaveTrace(ctx, &cascade.Trace{ID: id, State: cascade.TraceProcessing, Prompts: []string{}}); err != nil {
					b.Fatal(err)
				}
			}
			ks := make([]cascade.Kernel, 0, batch)
			for b.Loop() {
				stop := testkit.Probe(5*time.Millisecond, func() error {
					_, _, err := d.UpdateTrace(ctx, "other", func(t *cascade.Trace, _ bool) error { t.Bytes++; return nil })
					return err
				}, b.Error)
				cpu0 := testkit.CPUTime()
				t0 := time.Now()
				err := d.ReplaceKernelsFrom(ctx, "big", func(add func([]cascade.Kernel) error) error {
					for i := 0; i < n; i += batch {
						ks = ks[:0]
						for j := i; j < i+batch; j++ {
							nm := names[j%200]
							ks = append(ks, cascade.Kernel{KernelID: j + 1, Context: &kctx, Name: nm[0], DemangledName: nm[1],
								TraceFile: files[j], GridX: 64 + j%960, GridY: 1, GridZ: 1, BlockX: 128, BlockY: 1, BlockZ: 1,
								Instructions: cascade.Ptr(int64(1000 + j))})
						}
						if err := add(ks); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(t0).Seconds(), "s-replace")
				b.ReportMetric((testkit.CPUTime() - cpu0).Seconds(), "s-cpu")
				if waits := stop(); len(waits) > 0 {
					b.ReportMetric(float64(waits[len(waits)-1].Microseconds())/1000, "ms-write-max")
					b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "ms-write-p99")
				}
			}
			p, err := d.Kernels(ctx, "big", "", cascade.Page{First: 1, Count: true})
			if err != nil || p.Total != n {
				b.Fatalf("%d kernels, %v", p.Total, err)
			}
		})
	}
}
