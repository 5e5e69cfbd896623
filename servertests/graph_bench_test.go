package servertests_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/internal/gcfloor"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// BenchmarkKernelsPage asks a real server over HTTP for the page of 100
// kernels after row 900,000 of a trace with 1,000,000 kernels, as a script
// paging through it does, from a client in a process of its own (see
// benchPages), and reports the latency's p50 and p99 and the server's CPU
// time and allocations per page. The kernels go in through the database's
// ingest (ReplaceKernelsFrom), whose time is logged. The server scans the
// bucket every 2 s and keeps a GC heap floor of 64 MiB, its defaults
// (CASCADE_GC_HEAP_FLOOR_MIB=0 in the environment takes the floor away,
// to compare).
func BenchmarkKernelsPage(b *testing.B) {
	const total, depth = 1_000_000, 900_000
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			s := servertest.Server(b, func(c *app.Config) {
				c.DatabaseURL = u
				c.Logger = nil
				c.ScanInterval = 2 * time.Second
				c.GCHeapFloor = gcFloor()
			})
			ctx := context.Background()
			// The trace lives only in the database. The scanner's start pass
			// would remove it as gone from the bucket, so it is saved once
			// that pass is over (a scan is counted).
			testkit.Eventually(b, time.Minute, "the start pass", func() bool {
				return testkit.Scrape(b, s.URL+"/metrics")["cascade_scan_duration_seconds_count"] >= 1
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
					"variables": map[string]any{"after": cascade.Cursor(depth - 1)},
				})
				want := 0
				if q.name == "WithTotal" {
					want = total
				}
				b.Run(q.name, func(b *testing.B) { benchPages(b, s.URL+"/graphql", body, depth+1, want) })
			}
		})
	}
}

// gcFloor is cascade serve's GC heap floor, or the one
// CASCADE_GC_HEAP_FLOOR_MIB says.
func gcFloor() int64 {
	if v := os.Getenv("CASCADE_GC_HEAP_FLOOR_MIB"); v != "" {
		n, _ := strconv.Atoi(v)
		return int64(n) << 20
	}
	return gcfloor.Default
}

// benchPages has another process (this test binary running
// TestKernelsPageClient) ask url for the page in body b.N times, one
// request after the other on one kept connection, as a script paging
// through a trace does, and checks every answer: 100 kernels from kernel
// id first, and totalCount when want is not 0. The client is out of this
// process, as the load client was, so its allocations do not
// drive the server's garbage collector and the server's CPU time is its
// own. It reports the latency's p50 and p99 as the client saw it, and the
// server process's CPU time, allocations and garbage collections per page
// (PostgreSQL's own CPU time is not in it; SQLite's is).
func benchPages(b *testing.B, url string, body []byte, first, want int) {
	results := filepath.Join(b.TempDir(), "results.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelsPageClient$", "-test.timeout=30m")
	cmd.Env = append(os.Environ(),
		"CASCADE_PAGE_URL="+url,
		"CASCADE_PAGE_BODY="+string(body),
		"CASCADE_PAGE_FIRST="+strconv.Itoa(first),
		"CASCADE_PAGE_TOTAL="+strconv.Itoa(want),
		"CASCADE_PAGE_N="+strconv.Itoa(b.N),
		"CASCADE_PAGE_RESULTS="+results)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	b.ReportAllocs()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	b.ResetTimer()
	cpu0 := testkit.CPUTime()
	err := cmd.Run()
	cpu := testkit.CPUTime() - cpu0
	b.StopTimer()
	runtime.ReadMemStats(&mem1)
	if err != nil {
		b.Fatalf("client: %v\n%s", err, out.Bytes())
	}
	var r pageResults
	data, err := os.ReadFile(results)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		b.Fatal(err)
	}
	if r.Error != "" {
		b.Fatal(r.Error)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/page")
	b.ReportMetric(float64(r.CPU.Microseconds())/float64(b.N), "client-cpu-µs/page")
	b.ReportMetric(float64(mem1.NumGC-mem0.NumGC)/float64(b.N), "server-gc/page")
	lat := make([]time.Duration, len(r.Latencies))
	for i, l := range r.Latencies {
		lat[i] = time.Duration(l)
	}
	testkit.ReportLatencies(b, lat)
}

// pageResults is what TestKernelsPageClient reports to benchPages.
type pageResults struct {
	Error     string        // the first wrong answer, if any
	Latencies []int64       // ns from request to the answer's end, of every page
	CPU       time.Duration // the client process's, while it asked
}

// TestKernelsPageClient is benchPages' client, in its own process; without
// CASCADE_PAGE_URL it does nothing.
func TestKernelsPageClient(t *testing.T) {
	url := os.Getenv("CASCADE_PAGE_URL")
	if url == "" {
		t.Skip("run by BenchmarkKernelsPage")
	}
	body := []byte(os.Getenv("CASCADE_PAGE_BODY"))
	first, _ := strconv.Atoi(os.Getenv("CASCADE_PAGE_FIRST"))
	want, _ := strconv.Atoi(os.Getenv("CASCADE_PAGE_TOTAL"))
	n, _ := strconv.Atoi(os.Getenv("CASCADE_PAGE_N"))
	cpu0 := testkit.CPUTime()
	res := pageResults{Latencies: make([]int64, 0, n)}
	for range n {
		t0 := time.Now()
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			res.Error = err.Error()
			break
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
		res.Latencies = append(res.Latencies, int64(time.Since(t0)))
		ks := r.Data.Trace.Kernels
		if err != nil || len(r.Errors) > 0 || len(ks.Edges) != 100 || ks.Edges[0].Node.KernelID != first {
			res.Error = fmt.Sprintf("page: %v %v %d kernels", err, r.Errors, len(ks.Edges))
			break
		}
		if ks.TotalCount != want {
			res.Error = fmt.Sprintf("totalCount %d, want %d", ks.TotalCount, want)
			break
		}
	}
	res.CPU = testkit.CPUTime() - cpu0
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("CASCADE_PAGE_RESULTS"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
