package scanner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/events"
)

// BenchmarkSteadyStateScan measures one periodic scan of a bucket holding
// 1,000 finished traces of 200 files each, where nothing changed: the
// scan's cost must follow what changed, not the size of the bucket.
//
//	go test ./scanner -run '^$' -bench SteadyStateScan -benchtime 200x
func BenchmarkSteadyStateScan(b *testing.B) {
	const traces, files = 1000, 200
	root := b.TempDir()
	for i := range traces {
		dir := filepath.Join(root, fmt.Sprintf("trace-%04d", i), "traces")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range files - 2 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("kernel-%d.traceg", j)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		// A ready trace without it would be uploading again.
		os.WriteFile(filepath.Join(dir, "kernelslist.g"), []byte("kernel-0.traceg\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "..", "metadata.json"), []byte(`{"model": "m"}`), 0o644)
	}
	ctx := context.Background()
	// testutil would import this package: open the database directly.
	d, err := db.Open(ctx, db.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for i := range traces {
		t := &cascade.Trace{ID: fmt.Sprintf("trace-%04d", i), State: cascade.TraceReady, TraceGPUArch: "sm_90", Prompts: []string{}}
		if err := d.SaveTrace(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	s := New(Config{Root: root, Store: d, Events: &events.Broker{}})
	known, _ := d.AllTraces(ctx)
	for _, t := range known {
		s.traces[t.ID] = &entry{state: t.State}
	}
	s.scan(ctx, true, true) // the start-up scan walks everything once
	if ts, _ := d.Traces(ctx, cascade.TraceFilter{State: cascade.TraceReady}, cascade.Page{First: 1, Count: true}); ts.Total != traces {
		b.Fatalf("%d of %d traces ready after the first scan", ts.Total, traces)
	}
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := cpuTime()
		s.scan(ctx, true, false)
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/scan")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
