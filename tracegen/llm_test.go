package tracegen_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracegen"
)

// Three arrays of a small vecAdd: c[i] = a[i] + b[i], doubles.
const (
	srcA = 0x7f32c5500000
	srcB = 0x7f32c5600000
	srcC = 0x7f32c56c3600
)

// writeSource writes a raw vecAdd-like trace as the v3 tracer does: 3
// blocks of 64 threads (2 warps), the last one partial (one warp runs).
func writeSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("-kernel name = _Z6vecAddPdS_S_i\n-kernel id = 1\n-grid dim = (3,1,1)\n-block dim = (64,1,1)\n-shmem = 0\n-nregs = 10\n-binary version = 61\n-cuda stream id = 0\n-shmem base_addr = 0x00007f32f1000000\n-local mem base_addr = 0x00007f32ef000000\n-nvbit version = 1.5.3\n-accelsim tracer version = 3\n\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n")
	for blk := range 3 {
		for w := range 2 {
			if blk == 2 && w == 1 {
				fmt.Fprintf(&b, "%d 0 0 %d 0058 00000000 0 EXIT 0 0 \n", blk, w)
				continue
			}
			off := uint64(blk*512 + w*256)
			fmt.Fprintf(&b, "%d 0 0 %d 0008 ffffffff 1 R1 MOV 0 0 \n", blk, w)
			fmt.Fprintf(&b, "%d 0 0 %d 0098 ffffffff 1 R4 LDG.E.64 1 R4 8 1 0x%x 8 \n", blk, w, srcA+off)
			fmt.Fprintf(&b, "%d 0 0 %d 00a8 ffffffff 1 R6 LDG.E.64 1 R6 8 1 0x%x 8 \n", blk, w, srcB+off)
			fmt.Fprintf(&b, "%d 0 0 %d 00c8 ffffffff 1 R8 DADD 2 R4 R6 0 \n", blk, w)
			fmt.Fprintf(&b, "%d 0 0 %d 00d8 ffffffff 0 STG.E.64 2 R8 R2 8 1 0x%x 8 \n", blk, w, srcC+off)
			fmt.Fprintf(&b, "%d 0 0 %d 00e8 ffffffff 0 EXIT 0 0 \n", blk, w)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces", "kernel-1.trace"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGenerateLLM(t *testing.T) {
	src := writeSource(t)
	cfg := tracegen.LLMConfig{From: src, Launches: 40, Layers: 1, DecodeSteps: 3}
	dir := filepath.Join(t.TempDir(), "llm")
	res, err := tracegen.GenerateLLM(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Launches) != 40 || res.BlockInsts != 12 {
		t.Fatalf("%d launches, %d instructions a block; want 40, 12", len(res.Launches), res.BlockInsts)
	}

	// The stats, as the scanner reads them.
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	var w tracedir.Warnings
	ks, err := tree.ReadKernels(&w)
	if err != nil || len(w.List) > 0 {
		t.Fatal(err, w.List)
	}
	if len(ks) != 40 {
		t.Fatalf("stats: %d kernels, want 40", len(ks))
	}
	// A step: embed, 6 layer kernels, lm_head; the prefill's grids are
	// larger than the decode steps'.
	names := map[string]bool{}
	for i, k := range ks {
		l := res.Launches[i]
		names[k.Name] = true
		if k.KernelID != i+1 || k.Name != l.Name || k.Grid() != (cascade.Dim3{X: l.Blocks, Y: 1, Z: 1}) ||
			cascade.Deref(k.Instructions) != int64(l.Blocks)*12 {
			t.Errorf("kernel %d: stats %+v, launch %+v", i+1, k, l)
		}
		if l.Step == 0 && l.Kind == "mlp_up" && l.Blocks <= 4 || l.Step > 0 && l.Kind == "mlp_up" && l.Blocks != 4 {
			t.Errorf("launch %d: %s of step %d has %d blocks", i, l.Kind, l.Step, l.Blocks)
		}
		// Every kernel trace holds as many instruction lines as its
		// stats row counts, its blocks numbered 0 to grid-1.
		data, err := os.ReadFile(filepath.Join(dir, "traces", fmt.Sprintf("kernel-%d.trace", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		lines, blocks := 0, map[int]bool{}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && f[0][0] >= '0' && f[0][0] <= '9' {
				lines++
				b, _ := strconv.Atoi(f[0])
				blocks[b] = true
			}
		}
		if int64(lines) != cascade.Deref(k.Instructions) || len(blocks) != l.Blocks || !blocks[l.Blocks-1] {
			t.Errorf("kernel-%d.trace: %d lines of %d blocks, stats say %d instructions, grid %d", i+1, lines, len(blocks), cascade.Deref(k.Instructions), l.Blocks)
		}
		if !strings.Contains(string(data), "-kernel name = "+l.Name+"\n") || !strings.Contains(string(data), fmt.Sprintf("-grid dim = (%d,1,1)\n", l.Blocks)) {
			t.Errorf("kernel-%d.trace: header does not name %s with grid %d", i+1, l.Name, l.Blocks)
		}
	}
	if len(names) != 8 {
		t.Errorf("%d kernel names, want 8: %v", len(names), names)
	}

	// Addresses: block b of a kernel reads its weights at their base +
	// b·512 (64 doubles a block), and the activations the kernel before
	// it wrote.
	k2 := readFile(t, filepath.Join(dir, "traces", "kernel-2.trace"))
	k3 := readFile(t, filepath.Join(dir, "traces", "kernel-3.trace"))
	stores2 := addrs(k2, "STG")
	loads3 := addrs(k3, "LDG")
	for a := range stores2 {
		if !loads3[a] && a < stores2min(stores2)+uint64(res.Launches[2].Blocks)*512 {
			t.Errorf("kernel 3 does not read %#x, which kernel 2 wrote", a)
			break
		}
	}
	first := strings.Index(k2, "\n0 0 0 0 ")
	if first < 0 || !strings.Contains(k2, "\n1 0 0 1 ") {
		t.Errorf("kernel-2.trace: blocks 0 and 1 missing")
	}

	// The kernel list: MemcpyHtoD lines, then every kernel in order.
	list, err := kernellist.Read(filepath.Join(dir, "traces", "kernelslist"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(list.Kernels()); got != 40 {
		t.Errorf("kernelslist: %d kernels, want 40", got)
	}
	if !list.Commands[0].IsMemcpy() {
		t.Errorf("kernelslist: first line %q is not a MemcpyHtoD", list.Commands[0].Text)
	}

	// Timing: one row a launch, each its launch's duration.
	rt, err := tracedir.ReadRealTiming(filepath.Join(dir, "real_timing.json"))
	if err != nil || len(rt.Rows) != 40 || !rt.Usable() {
		t.Fatalf("real_timing.json: %d rows, %v", len(rt.Rows), err)
	}
	for i, r := range rt.Rows {
		if r.KernelID != i+1 || r.DurationNs == nil || *r.DurationNs <= 0 {
			t.Errorf("timing row %d: %+v", i, r)
		}
	}
	md, err := tracedir.ParseMetadata([]byte(readFile(t, filepath.Join(dir, "metadata.json"))))
	if err != nil || cascade.Deref(md.TraceGPUArch) != "sm_61" || cascade.Deref(md.SuggestedSimConfig) != "SM6_TITANX" || md.RealTiming != "real_timing.json" {
		t.Errorf("metadata.json: %+v, %v", md, err)
	}

	// The built-in post-processor reads it.
	if err := postproc.Postprocess(context.Background(), filepath.Join(dir, "traces"), postproc.Options{Format: postproc.FormatTraceg, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if n, err := tracedir.CountKernelLines(filepath.Join(dir, "traces", kernellist.Name)); err != nil || n != 40 {
		t.Errorf("kernelslist.g: %d kernels, %v", n, err)
	}

	// Deterministic: the same config writes the same files.
	dir2 := filepath.Join(t.TempDir(), "llm")
	if _, err := tracegen.GenerateLLM(context.Background(), dir2, cfg); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"real_timing.json", "traces/kernelslist", "traces/stats.csv", "traces/kernel-17.trace"} {
		if !bytes.Equal([]byte(readFile(t, filepath.Join(dir, f))), []byte(readFile(t, filepath.Join(dir2, f)))) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// TestLLMLaunchesShape: a request is a prefill step then decode steps; a
// decode step's kernels are few-block ones, its attention grows with the
// tokens; durations grow with the work.
func TestLLMLaunchesShape(t *testing.T) {
	ls, err := tracegen.LLMLaunches(tracegen.LLMConfig{Launches: 20000}, 736)
	if err != nil {
		t.Fatal(err)
	}
	perStep := 2 + 6*4
	if len(ls) != 20000 || ls[perStep].Step != 1 || ls[perStep*12].Request != 1 || ls[perStep*12].Step != 0 {
		t.Fatalf("shape: %d launches, launch %d is step %d", len(ls), perStep, ls[perStep].Step)
	}
	for _, l := range ls {
		if l.Step > 0 && l.Blocks > 9 || l.Step == 0 && l.Kind == "qkv" && l.Blocks < 32 {
			t.Fatalf("launch %d: %s of step %d has %d blocks", l.KernelID, l.Kind, l.Step, l.Blocks)
		}
		if l.DurationNs < 2500*0.97 {
			t.Fatalf("launch %d: duration %g", l.KernelID, l.DurationNs)
		}
	}
	big, small := ls[2], ls[perStep+2] // qkv of prefill and of the first decode step
	if big.Kind != "qkv" || small.Kind != "qkv" || big.DurationNs < 2*small.DurationNs {
		t.Errorf("qkv: prefill %+v, decode %+v", big, small)
	}
	if _, err := tracegen.LLMLaunches(tracegen.LLMConfig{Launches: -1}, 736); err == nil {
		t.Error("a negative launch count was taken")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// addrs returns the addresses of a trace's op instructions.
func addrs(trace, op string) map[uint64]bool {
	out := map[uint64]bool{}
	for _, line := range strings.Split(trace, "\n") {
		if !strings.Contains(line, " "+op) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "0x") {
				a, _ := strconv.ParseUint(f[2:], 16, 64)
				out[a] = true
			}
		}
	}
	return out
}

func stores2min(m map[uint64]bool) uint64 {
	lo := ^uint64(0)
	for a := range m {
		lo = min(lo, a)
	}
	return lo
}

// TestGenerateLLMNoNoise: a trace asked for without noise (Noise < 0, the
// quiet shape) gets measured durations of its work alone, as
// LLMLaunches gives them (GenerateLLM's defaults once turned it into the
// default 2 % on LLMLaunches' second pass).
func TestGenerateLLMNoNoise(t *testing.T) {
	src := writeSource(t)
	cfg := tracegen.LLMConfig{From: src, Launches: 30, Layers: 1, DecodeSteps: 3, Noise: -1}
	dir := filepath.Join(t.TempDir(), "llm")
	res, err := tracegen.GenerateLLM(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := tracegen.LLMLaunches(cfg, res.BlockInsts)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tracedir.ReadRealTiming(filepath.Join(dir, "real_timing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.Rows) != len(ls) {
		t.Fatalf("%d timing rows, %d launches", len(rt.Rows), len(ls))
	}
	for i, r := range rt.Rows {
		want := 2500 + 0.35*float64(ls[i].Insts)
		if r.DurationNs == nil || math.Abs(*r.DurationNs-want) > 0.05 || math.Abs(ls[i].DurationNs-want) > 1e-9 {
			t.Fatalf("launch %d: %v ns written, %g from LLMLaunches, want %g (no noise)", i, r.DurationNs, ls[i].DurationNs, want)
		}
	}
}
