package postproc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSmallStats: a trace whose stats files are big is finished on its
// own, outside the batches, which it would hold up.
func TestSmallStats(t *testing.T) {
	dir := t.TempDir()
	if !smallStats(dir) {
		t.Fatal("no traces folder: not small")
	}
	traces := filepath.Join(dir, "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	row := "kernel-1.trace, _Z1kv, 1, 1, 1, 1, 32, 1, 1, 32, 100, 100\n"
	write := func(name string, rows int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(traces, name), []byte(strings.Repeat(row, rows)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stats_ctx_0x1", 1000)
	write("kernel-1.traceg", smallStatsBytes/len(row)+1) // no stats file: not counted
	if !smallStats(dir) {
		t.Fatal("1,000 kernels: not small")
	}
	write("stats_ctx_0x2", smallStatsBytes/len(row))
	if smallStats(dir) {
		t.Fatal("two stats files past the limit together: small")
	}
	os.Remove(filepath.Join(traces, "stats_ctx_0x2"))
	if err := syscall.Mkfifo(filepath.Join(dir, ".fifo"), 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	if err := os.Symlink("../.fifo", filepath.Join(traces, "stats_ctx_0x3")); err != nil {
		t.Fatal(err)
	}
	if smallStats(dir) {
		t.Fatal("a stats file that is a pipe: small")
	}
}
