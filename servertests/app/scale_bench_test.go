package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// statsHeader is the tracer's stats file header.
const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"

// writeStats writes a per-context stats file of n kernels, about 100 bytes
// a row, whose names repeat over 200 distinct mangled kernels, and the
// kernelslist.g that goes with it, under dir/traces. It returns the files
// written (slash paths relative to dir) with their sizes.
func writeStats(tb testing.TB, dir string, n int) map[string]int64 {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		tb.Fatal(err)
	}
	write := func(rel string, fill func(w *bufio.Writer)) {
		f, err := os.Create(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		fill(w)
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	write("traces/stats_ctx_0x1", func(w *bufio.Writer) {
		w.WriteString(statsHeader)
		for i := range n {
			fmt.Fprintf(w, "kernel-%d-ctx_0x1.trace.xz, _Z10kernel_%03dPfS_i, %d, 1, 1, %d, 128, 1, 1, 128, %d,%d\n",
				i+1, i%200, 64+i%960, 64+i%960, 1000+i, 1000+i)
		}
	})
	write("traces/kernelslist.g", func(w *bufio.Writer) {
		for i := range n {
			fmt.Fprintf(w, "kernel-%d-ctx_0x1.traceg\n", i+1)
		}
	})
	sizes := map[string]int64{}
	for _, rel := range []string{"traces/stats_ctx_0x1", "traces/kernelslist.g"} {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			tb.Fatal(err)
		}
		sizes[rel] = fi.Size()
	}
	return sizes
}

// metadataFor is a metadata.json listing files, which makes the upload
// complete once they are all there.
func metadataFor(files map[string]int64) []byte {
	type entry struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
	}
	var list []entry
	for p, s := range files {
		list = append(list, entry{p, s})
	}
	b, _ := json.Marshal(map[string]any{"model": "bench", "files": list})
	return b
}

// stateLog records when each trace reached each state, from a
// traceUpdated subscription.
type stateLog struct {
	mu   sync.Mutex
	seen map[string]time.Time // id + " " + state
	cond *sync.Cond
}

func watchStates(tb testing.TB, s *servertest.TestServer) *stateLog {
	l := &stateLog{seen: map[string]time.Time{}}
	l.cond = sync.NewCond(&l.mu)
	sub := s.Subscribe(tb, "graphql-transport-ws", `subscription { traceUpdated { id state } }`, nil)
	go func() {
		for {
			var r struct{ TraceUpdated struct{ ID, State string } }
			if err := sub.Next(time.Hour, &r); err != nil {
				return
			}
			l.mu.Lock()
			k := r.TraceUpdated.ID + " " + r.TraceUpdated.State
			if _, ok := l.seen[k]; !ok {
				l.seen[k] = time.Now()
			}
			l.cond.Broadcast()
			l.mu.Unlock()
		}
	}()
	return l
}

// wait returns when the trace reached state, or fails after a minute.
func (l *stateLog) wait(tb testing.TB, id, state string) time.Time {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	timer := time.AfterFunc(2*time.Minute, func() { l.mu.Lock(); l.cond.Broadcast(); l.mu.Unlock() })
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if at, ok := l.seen[id+" "+state]; ok {
			return at
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s never reached %s", id, state)
		}
		l.cond.Wait()
	}
}

func (l *stateLog) at(id, state string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.seen[id+" "+state]
	return at, ok
}

// uploadSmall writes a complete two-kernel trace, metadata.json last, and
// returns when metadata.json landed.
func uploadSmall(tb testing.TB, s *servertest.TestServer, id string) time.Time {
	tb.Helper()
	files := writeStats(tb, s.TraceDir(id), 2)
	meta := metadataFor(files)
	start := time.Now()
	s.WriteFile(tb, id, "metadata.json", meta)
	return start
}

// BenchmarkIngest1M uploads a trace of 1,000,000 kernels (a ~100 MB stats
// file and its kernelslist.g, so the post-processor is skipped) into a
// real server and reports the time from its metadata.json landing to its
// READY event (s-ingest). While it ingests, small traces are uploaded one
// after another, each awaited to READY: ms-other-max is the longest of
// those uploads (metadata.json to READY event), beside ms-other-idle, the
// same on an idle server; ms-write-max is the longest a write of another
// trace's row waited for the database meanwhile.
//
//	go test ./app -run '^$' -bench Ingest1M -benchtime 1x -timeout 30m
func BenchmarkIngest1M(b *testing.B) {
	const n = 1_000_000
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			s := servertest.Server(b, func(c *app.Config) {
				c.DatabaseURL, c.Logger = u, nil // the default: one post-processor at a time
			})
			ctx := context.Background()
			states := watchStates(b, s)
			other := &cascade.Trace{ID: "writes", State: cascade.TraceFailed, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}}
			if err := s.DB.SaveTrace(ctx, other); err != nil {
				b.Fatal(err)
			}
			var idle time.Duration
			for i := range 5 {
				id := fmt.Sprintf("idle-%d", i)
				start := uploadSmall(b, s, id)
				idle = max(idle, states.wait(b, id, "READY").Sub(start))
			}
			big := "big"
			files := writeStats(b, s.TraceDir(big), n)
			states.wait(b, big, "UPLOADING")
			for b.Loop() {
				start, cpu0 := time.Now(), testkit.CPUTime()
				s.WriteFile(b, big, "metadata.json", metadataFor(files))
				stop := testkit.Probe(20*time.Millisecond, func() error {
					_, _, err := s.DB.UpdateTrace(ctx, other.ID, func(t *cascade.Trace, found bool) error {
						t.Bytes++
						return nil
					})
					return err
				}, b.Error)
				var otherMax time.Duration
				others := 0
				for i := 0; ; i++ {
					if _, ok := states.at(big, "READY"); ok {
						break
					}
					id := fmt.Sprintf("other-%d", i)
					t0 := uploadSmall(b, s, id)
					otherMax = max(otherMax, states.wait(b, id, "READY").Sub(t0))
					others++
				}
				ready := states.wait(b, big, "READY")
				cpu := testkit.CPUTime() - cpu0
				waits := stop()
				b.ReportMetric(ready.Sub(start).Seconds(), "s-ingest")
				b.ReportMetric(cpu.Seconds(), "s-cpu")
				b.ReportMetric(float64(otherMax.Microseconds())/1000, "ms-other-max")
				b.ReportMetric(float64(others), "others")
				b.ReportMetric(float64(idle.Microseconds())/1000, "ms-other-idle")
				if len(waits) > 0 {
					b.ReportMetric(float64(waits[len(waits)-1].Microseconds())/1000, "ms-write-max")
				}
			}
			tr, err := s.DB.Trace(ctx, big)
			if err != nil || tr.KernelCount != n {
				b.Fatalf("big trace: %d kernels, %v", tr.KernelCount, err)
			}
		})
	}
}

// writeBucket writes traces finished traces of files files each: 196
// kernel traces, their stats file and kernelslist.g, a raw kernel list and
// metadata.json.
func writeBucket(tb testing.TB, root string, traces, files int) {
	tb.Helper()
	for i := range traces {
		dir := filepath.Join(root, fmt.Sprintf("trace-%04d", i))
		kernels := files - 4
		sizes := writeStats(tb, dir, kernels)
		for j := range kernels {
			rel := fmt.Sprintf("traces/kernel-%d-ctx_0x1.traceg", j+1)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte("x"), 0o644); err != nil {
				tb.Fatal(err)
			}
			sizes[rel] = 1
		}
		if err := os.WriteFile(filepath.Join(dir, "traces", "kernelslist_ctx_0x1"), []byte("kernel-1-ctx_0x1.trace.xz\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
		sizes["traces/kernelslist_ctx_0x1"] = int64(len("kernel-1-ctx_0x1.trace.xz\n"))
		if err := os.WriteFile(filepath.Join(dir, "metadata.json"), metadataFor(sizes), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkStart starts a server on a bucket of 1,000 finished traces of
// 200 files each that its database has never seen, and reports the time
// from app.Run to every trace READY in the database (s-first), then
// restarts it and reports the same (s-restart).
//
//	go test ./app -run '^$' -bench Start -benchtime 1x -timeout 30m
func BenchmarkStart(b *testing.B) {
	const traces, files = 1000, 200
	bucket := filepath.Join(b.TempDir(), "bucket")
	writeBucket(b, bucket, traces, files)
	for name, u := range dbtest.DatabaseURLs(b) {
		b.Run(name, func(b *testing.B) {
			cfg := app.Config{
				DataDir:        b.TempDir(),
				Bucket:         "cascade",
				Prefix:         "traces",
				Addr:           "127.0.0.1:0",
				ScanInterval:   2 * time.Second,
				PostprocessCmd: []string{"/nonexistent/postprocessor"},
				DatabaseURL:    u,
			}
			if err := os.MkdirAll(filepath.Dir(cfg.BucketDir()), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(bucket, cfg.BucketDir()); err != nil {
				b.Fatal(err)
			}
			defer os.Rename(cfg.BucketDir(), bucket) // for the next database
			start := func() time.Duration {
				t0, cpu0 := time.Now(), testkit.CPUTime()
				defer func() { b.Logf("%s start: %v CPU", name, (testkit.CPUTime() - cpu0).Round(time.Millisecond)) }()
				m, err := app.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				for {
					n, err := m.DB.TraceCounts(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if n[cascade.TraceReady] == traces+1 { // the sample too
						return time.Since(t0)
					}
					if n[cascade.TraceFailed] > 0 {
						b.Fatalf("failed traces: %v", n)
					}
					if time.Since(t0) > 5*time.Minute {
						b.Fatalf("not all ready after 5 minutes: %v", n)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			for b.Loop() {
				b.ReportMetric(start().Seconds(), "s-first")
				b.ReportMetric(start().Seconds(), "s-restart")
			}
		})
	}
}
