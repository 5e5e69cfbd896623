package app_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// TestBigIngestHoldsNoOneBack: while a trace's kernels are being ingested,
// another trace goes from UPLOADING to READY, and its events come out
// before the big trace's READY. The big trace's stats file is a FIFO the
// test writes, so its ingest is held midway, with rows in, for as long as
// the test wants: no clock decides. On SQLite, an ingest holding the one
// write transaction throughout (as it once did) keeps the other trace
// from ever leaving PROCESSING. The server runs one post-processing slot,
// the default, which the big ingest gives up: holding it, as it once did,
// keeps the other trace waiting too.
func TestBigIngestHoldsNoOneBack(t *testing.T) {
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			s := servertest.Server(t, func(c *app.Config) { c.DatabaseURL, c.PostprocessConcurrency = u, 1 })
			states := watchStates(t, s)
			dir := s.TraceDir("big")
			if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dir, ".stats.fifo") // a dotfile: no part of the trace
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skipf("no FIFO: %v", err)
			}
			// Whatever happens, the ingest's read ends before the server
			// closes (cleanups run last first).
			t.Cleanup(func() {
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			})
			if err := os.Symlink("../.stats.fifo", filepath.Join(dir, "traces", "stats_ctx_0x1")); err != nil {
				t.Fatal(err)
			}
			const n = 6000 // more than a chunk of SQLite's ingest
			s.WriteFile(t, "big", "traces/kernelslist_ctx_0x1", []byte("kernel-1-ctx_0x1.trace.xz\n"))
			list := make([]byte, 0, n*30)
			for i := range n {
				list = fmt.Appendf(list, "kernel-%d-ctx_0x1.traceg\n", i+1)
			}
			s.WriteFile(t, "big", "traces/kernelslist.g", list)
			s.WriteFile(t, "big", "metadata.json", []byte(`{"model": "big"}`))

			// A FIFO opens for writing once its reader, the ingest, has it open.
			var f *os.File
			testkit.Eventually(t, time.Minute, "the ingest opens the stats file", func() bool {
				var err error
				f, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				return err == nil
			})
			defer f.Close()
			f.Fd() // back to blocking writes
			w := bufio.NewWriter(f)
			row := func(i int) {
				fmt.Fprintf(w, "kernel-%d-ctx_0x1.trace.xz, _Z10kernel_%03dPfS_i, 1, 1, 1, 1, 32, 1, 1, 32, %d,%d\n", i+1, i%200, i, i)
			}
			w.WriteString(statsHeader)
			for i := range n / 2 {
				row(i)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			states.wait(t, "big", "PROCESSING")

			files := writeStats(t, s.TraceDir("other"), 2)
			states.wait(t, "other", "UPLOADING")
			s.WriteFile(t, "other", "metadata.json", metadataFor(files))
			states.wait(t, "other", "READY")
			if _, ok := states.at("big", "READY"); ok {
				t.Fatal("big is READY before its stats file was written")
			}
			var other struct {
				Trace struct {
					Kernels struct{ TotalCount int }
				}
			}
			s.MustDo(t, `{ trace(id: "other") { kernels { totalCount } } }`, nil, &other)
			if other.Trace.Kernels.TotalCount != 2 {
				t.Fatalf("other has %d kernels, want 2", other.Trace.Kernels.TotalCount)
			}

			for i := n / 2; i < n; i++ {
				row(i)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			states.wait(t, "big", "READY")
			var big struct {
				Trace struct {
					Kernels struct {
						TotalCount int
						Nodes      []struct{ KernelID int }
					}
				}
			}
			s.MustDo(t, `{ trace(id: "big") { kernels(first: 5000) { totalCount nodes { kernelId } } } }`, nil, &big)
			if k := big.Trace.Kernels; k.TotalCount != n || len(k.Nodes) != 5000 || k.Nodes[4999].KernelID != 5000 {
				t.Fatalf("big: total %d, %d kernels on the first page", k.TotalCount, len(k.Nodes))
			}
		})
	}
}
