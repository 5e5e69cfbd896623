package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/internal/app"
	"github.com/cascade-sim/cascade/internal/testutil"
)

// reportLatencies reports the median and 99th percentile of ds.
func reportLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "ms-p50")
	b.ReportMetric(ms(0.99), "ms-p99")
}

// BenchmarkKernelsPage asks a real server over HTTP for the page of 100
// kernels after row 900,000 of a trace with 1,000,000 kernels, as a script
// paging through it does, and reports the latency's p50 and p99. The
// kernels go in through the database's ingest (ReplaceKernelsFrom), whose
// time is logged.
func BenchmarkKernelsPage(b *testing.B) {
	const total, depth = 1_000_000, 900_000
	for name, u := range testutil.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			s := testutil.Server(b, func(c *app.Config) { c.DatabaseURL = u; c.Logger = nil })
			ctx := context.Background()
			// The trace lives only in the database. The scanner's start pass
			// would remove it as gone from the bucket, so it is saved once
			// that pass is over (a scan is counted).
			testutil.Eventually(b, time.Minute, "the start pass", func() bool {
				return testutil.Scrape(b, s.URL+"/metrics")["cascade_scan_duration_seconds_count"] >= 1
			})
			tr := &cascade.Trace{ID: "big", State: cascade.TraceReady, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, KernelCount: total}
			if err := s.DB.SaveTrace(ctx, tr); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			err := s.DB.ReplaceKernelsFrom(ctx, tr.ID, func(add func([]cascade.Kernel) error) error {
				ks := make([]cascade.Kernel, 2000)
				for i := 0; i < total; i += len(ks) {
					for j := range ks {
						n := i + j
						ks[j] = cascade.Kernel{
							KernelID: n + 1, Context: cascade.Ptr("0x5a1e2c0"),
							Name:      fmt.Sprintf("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, %d)", n),
							TraceFile: fmt.Sprintf("kernel-%d.traceg", n+1), GridX: 1024, GridY: 1, GridZ: 1, BlockX: 128, BlockY: 1, BlockZ: 1,
							Instructions: cascade.Ptr(int64(n * 7)),
						}
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
			b.Logf("%s: %d kernels in through ReplaceKernelsFrom in %v", name, total, time.Since(start).Round(time.Millisecond))
			for _, q := range []struct{ name, fields string }{
				{"NoTotal", "edges { cursor node { kernelId name traceFile grid { x y z } block { x y z } instructions } } pageInfo { hasNextPage endCursor }"},
				{"WithTotal", "totalCount edges { cursor node { kernelId name traceFile grid { x y z } block { x y z } instructions } } pageInfo { hasNextPage endCursor }"},
			} {
				body, _ := json.Marshal(map[string]any{
					"query":     `query($after: String) { trace(id: "big") { kernels(first: 100, after: $after) { ` + q.fields + ` } } }`,
					"variables": map[string]any{"after": db.Cursor(depth - 1)},
				})
				b.Run(q.name, func(b *testing.B) {
					ds := make([]time.Duration, 0, b.N)
					for b.Loop() {
						t0 := time.Now()
						resp, err := http.Post(s.URL+"/graphql", "application/json", bytes.NewReader(body))
						if err != nil {
							b.Fatal(err)
						}
						var r struct {
							Data struct {
								Trace struct {
									Kernels struct {
										TotalCount int
										Edges      []struct{ Node struct{ KernelID int } }
									}
								}
							}
							Errors []any
						}
						err = json.NewDecoder(resp.Body).Decode(&r)
						io.Copy(io.Discard, resp.Body) // read to the end, so the connection is kept for the next page
						resp.Body.Close()
						ds = append(ds, time.Since(t0))
						ks := r.Data.Trace.Kernels
						if err != nil || len(r.Errors) > 0 || len(ks.Edges) != 100 || ks.Edges[0].Node.KernelID != depth+1 {
							b.Fatalf("page: %v %v %d kernels", err, r.Errors, len(ks.Edges))
						}
						if q.name == "WithTotal" && ks.TotalCount != total {
							b.Fatalf("totalCount %d", ks.TotalCount)
						}
					}
					reportLatencies(b, ds)
				})
			}
		})
	}
}
