package posttraces

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/tracegen"
)

// BenchmarkPostprocess post-processes one generated ~200 MB raw kernel
// (plain and xz, .tracez and text) in a child process — the test binary
// re-executed through TestMain — and reports throughput over the raw bytes
// and the child's peak RSS. CASCADE_BENCH_LARGE=1 adds a ~2 GB kernel.
//
//	go test ./accelsim/posttraces -run '^$' -bench Postprocess -benchtime 3x
func BenchmarkPostprocess(b *testing.B) {
	sizes := []int64{200 << 20}
	if os.Getenv("CASCADE_BENCH_LARGE") == "1" {
		sizes = append(sizes, 2<<30)
	}
	for _, size := range sizes {
		for _, v := range []struct {
			name string
			xz   bool
			text bool
		}{{"plain", false, false}, {"xz", true, false}, {"plain-text", false, true}} {
			b.Run(fmt.Sprintf("%dMB/%s", size>>20, v.name), func(b *testing.B) {
				dir := b.TempDir()
				grid := int(max(size>>20, 64)) // about 1 MB per block, 8 warps each
				res, err := tracegen.Generate(context.Background(), dir, tracegen.Config{
					Grid: [3]int{grid, 1, 1}, Block: [3]int{256, 1, 1}, Bytes: size,
					Mem: true, LDGSTS: true, Idle: 0.05, XZ: v.xz, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(res.Kernels[0].Bytes)
				child := childRun{Target: dir, Jobs: 2, Text: v.text}
				var (
					peak int64
					cpu  time.Duration
					runs int
				)
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					removeOutputs(b, dir)
					b.StartTimer()
					rss, c := runChild(b, child)
					peak, cpu, runs = max(peak, rss), cpu+c, runs+1
				}
				b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
				// CPU seconds of the child (user+sys): comparable across runs
				// on a busy machine, where wall time is not.
				b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s/op")
			})
		}
	}
}

// childRun is the run a re-executed test binary makes (TestMain).
type childRun struct {
	Target  string
	Jobs    int
	Text    bool
	WorkDir string
}

// runChild runs Run as c says in a re-executed test binary and returns
// its peak RSS in KiB and its CPU time.
func runChild(b *testing.B, c childRun) (int64, time.Duration) {
	c.WorkDir = b.TempDir()
	arg, err := json.Marshal(c)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CASCADE_TRACEPROC_CHILD="+string(arg))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("child: %v\n%s", err, out)
	}
	ps := cmd.ProcessState
	return ps.SysUsage().(*syscall.Rusage).Maxrss, ps.UserTime() + ps.SystemTime()
}

func removeOutputs(b *testing.B, dir string) {
	for _, pat := range []string{"*.tracez", "*.traceg", "*.traceg.xz", "*.g"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range m {
			if err := os.Remove(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkLineChecks measures the per-line checks of the partitioning
// pass on a generated 32 MB kernel's instruction lines, in memory: the
// leading ids, PC and mask alone (ids), and with the instruction's fields
// after them (ids+fields), the cost fastInst (and checkInst where it
// falls back) adds to each line.
//
//	go test ./accelsim/posttraces -run '^$' -bench LineChecks
func BenchmarkLineChecks(b *testing.B) {
	var raw bytes.Buffer
	if _, err := tracegen.WriteKernel(&raw, 1, tracegen.Config{Grid: [3]int{64, 1, 1}, Block: [3]int{256, 1, 1},
		Bytes: 32 << 20, Mem: true, LDGSTS: true, Seed: 1}, 1); err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	size := int64(0)
	for l := range bytes.SplitSeq(raw.Bytes(), []byte{'\n'}) {
		if len(l) > 0 && l[0] != '-' && l[0] != '#' {
			lines = append(lines, l)
			size += int64(len(l)) + 1
		}
	}
	for _, fields := range []bool{false, true} {
		name := "ids"
		if fields {
			name = "ids+fields"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			var ids lineIDs
			for b.Loop() {
				for _, l := range lines {
					if !parseIDs(l, layoutClassic, &ids) {
						b.Fatalf("%q", l)
					}
					if fields && !fastInst(l, ids.fields, ids.mask, true) {
						if err := checkInst(l, ids.fields, ids.mask, true, 5); err != nil {
							b.Fatalf("%q: %v", l, err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/line")
		})
	}
}
