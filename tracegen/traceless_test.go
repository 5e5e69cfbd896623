package tracegen_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracegen"
)

// TestTraceLess: the trace of two tracer runs (kernels 5-7 and 20-22 of
// a 30-launch LLM-like trace) holds those six kernel traces, the full
// stats and timing, and one kernel list with both runs' lists; it
// post-processes, its stats mark the other 24 launches untraced, and the
// kernel list a run of either range simulates is the full trace's, byte
// for byte: the same copies before the same kernels.
func TestTraceLess(t *testing.T) {
	src := writeSource(t)
	full := filepath.Join(t.TempDir(), "full")
	if _, err := tracegen.GenerateLLM(context.Background(), full, tracegen.LLMConfig{From: src, Launches: 30, Layers: 1, DecodeSteps: 3}); err != nil {
		t.Fatal(err)
	}
	less := filepath.Join(t.TempDir(), "less")
	ranges := []tracegen.TraceRange{{Start: 5, End: 7}, {Start: 20, End: 22}}
	got, err := tracegen.TraceLess(full, less, ranges)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kernel-5.trace", "kernel-6.trace", "kernel-7.trace", "kernel-20.trace", "kernel-21.trace", "kernel-22.trace"}
	if !slices.Equal(got, want) {
		t.Fatalf("kernel traces %v, want %v", got, want)
	}
	onDisk, _ := filepath.Glob(filepath.Join(less, "traces", "kernel-*.trace"))
	if len(onDisk) != len(want) {
		t.Fatalf("kernel traces on disk: %v", onDisk)
	}
	for _, f := range []string{"traces/stats.csv", "real_timing.json", "metadata.json", "traces/kernel-21.trace"} {
		if readFile(t, filepath.Join(full, f)) != readFile(t, filepath.Join(less, f)) {
			t.Errorf("%s differs from the full trace's", f)
		}
	}
	// A list a run: run 1's every copy up to kernel 7 and kernels 5-7,
	// run 2's every copy up to kernel 22 and kernels 20-22.
	fullList := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(full, "traces", "kernelslist"))), "\n")
	before := func(k string) int {
		n := 0
		for _, l := range fullList {
			if l == k {
				return n
			}
			if strings.HasPrefix(l, "Memcpy") {
				n++
			}
		}
		t.Fatalf("%s not in the full list", k)
		return 0
	}
	for _, rg := range ranges {
		name := fmt.Sprintf("kernelslist-%d-%d", rg.Start, rg.End)
		list := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(less, "traces", name))), "\n")
		var kernels []string
		copies := 0
		for _, l := range list {
			if strings.HasPrefix(l, "kernel") {
				kernels = append(kernels, l)
			} else if strings.HasPrefix(l, "MemcpyHtoD,") {
				copies++
			} else {
				t.Fatalf("%s: line %q", name, l)
			}
		}
		last := fmt.Sprintf("kernel-%d.trace", rg.End)
		if len(kernels) != 3 || kernels[2] != last || copies != before(last) {
			t.Fatalf("%s: kernels %v, %d copies; want up to %s and %d", name, kernels, copies, last, before(last))
		}
	}
	if _, err := os.Stat(filepath.Join(less, "traces", "kernelslist")); err == nil {
		t.Error("a kernelslist of no run")
	}

	// Post-processed, both; the stats rows of untraced launches marked.
	for _, d := range []string{full, less} {
		if err := postproc.Postprocess(context.Background(), filepath.Join(d, "traces"), postproc.Options{Format: postproc.FormatTraceg, Jobs: 1}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := tracedir.ReadTraced(filepath.Join(less, "traces", kernellist.Name))
	if err != nil || tr.Lines != 6 {
		t.Fatalf("kernelslist.g: %+v, %v", tr, err)
	}
	tree, err := tracedir.StatsTree(less)
	if err != nil {
		t.Fatal(err)
	}
	var w tracedir.Warnings
	ks, err := tree.ReadKernels(&w)
	if err != nil || len(ks) != 30 {
		t.Fatalf("%d kernels, %v", len(ks), err)
	}
	var traced []int
	for i := range ks {
		if !tr.Mark(&ks[i]) {
			traced = append(traced, ks[i].KernelID)
		}
	}
	if !slices.Equal(traced, []int{5, 6, 7, 20, 21, 22}) || !ks[0].Untraced || ks[4].Untraced {
		t.Fatalf("traced %v", traced)
	}

	// A run of a range simulates the same list on either trace.
	for _, rg := range ranges {
		var ids []kernellist.Ref
		for id := rg.Start; id <= rg.End; id++ {
			ids = append(ids, kernellist.Ref{ID: id})
		}
		var lists [2]string
		for i, d := range []string{full, less} {
			l, err := kernellist.Read(filepath.Join(d, "traces", kernellist.Name))
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if _, err := kernellist.WriteSubset(l, out, ids); err != nil {
				t.Fatal(err)
			}
			lists[i] = readFile(t, filepath.Join(out, kernellist.Name))
		}
		if lists[0] != lists[1] || !strings.Contains(lists[0], "MemcpyHtoD") {
			t.Errorf("range %d-%d: the trace-less list\n%s\nis not the full trace's\n%s", rg.Start, rg.End, lists[1], lists[0])
		}
	}
}

// TestTraceLessContexts: per-context lists keep the ranges of their own
// context; a context no range is of gets no list, and a files list in metadata.json is made the new trace's.
func TestTraceLessContexts(t *testing.T) {
	full := t.TempDir()
	tr := filepath.Join(full, "traces")
	os.MkdirAll(tr, 0o755)
	files := map[string]string{
		"traces/kernelslist_ctx_0xa": "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0xa.trace\nkernel-2-ctx_0xa.trace\nMemcpyHtoD,0x0000000000002000,64\nkernel-3-ctx_0xa.trace\n",
		"traces/kernelslist_ctx_0xb": "kernel-1-ctx_0xb.trace\nkernel-2-ctx_0xb.trace\n",
		"traces/stats_ctx_0xa":       "stats a\n",
		"traces/stats_ctx_0xb":       "stats b\n",
		"metadata.json":              `{"run_name": "x", "files": [{"path": "traces/stats_ctx_0xa", "size": 8}]}`,
	}
	for _, k := range []string{"1-ctx_0xa", "2-ctx_0xa", "3-ctx_0xa", "1-ctx_0xb", "2-ctx_0xb"} {
		files["traces/kernel-"+k+".trace"] = k
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(full, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	less := t.TempDir()
	got, err := tracegen.TraceLess(full, less, []tracegen.TraceRange{{Context: "0xA", Start: 3, End: 3}})
	if err != nil || !slices.Equal(got, []string{"kernel-3-ctx_0xa.trace"}) {
		t.Fatalf("%v, %v", got, err)
	}
	if l := readFile(t, filepath.Join(less, "traces", "kernelslist_ctx_0xa-3-3")); l != "MemcpyHtoD,0x0000000000001000,64\nMemcpyHtoD,0x0000000000002000,64\nkernel-3-ctx_0xa.trace\n" {
		t.Errorf("list of 0xa: %q", l)
	}
	if _, err := os.Stat(filepath.Join(less, "traces", "kernelslist_ctx_0xb-3-3")); err == nil {
		t.Errorf("a list of 0xb, which no range is of")
	}
	md, err := tracedir.ParseMetadata([]byte(readFile(t, filepath.Join(less, "metadata.json"))))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range md.Files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"traces/kernel-3-ctx_0xa.trace", "traces/kernelslist_ctx_0xa-3-3", "traces/stats_ctx_0xa", "traces/stats_ctx_0xb"}) {
		t.Errorf("files list %v", paths)
	}
	if _, err := tracegen.TraceLess(full, t.TempDir(), nil); err == nil {
		t.Error("no ranges: no error")
	}
}

// TestParseTraceList reads back what sampling.TraceList writes, contexts
// included, and names a bad line.
func TestParseTraceList(t *testing.T) {
	text := "# Cascade sampling plan sp1: STEM\n#\n# context 0x55d2c3a1e4f0, launches 4-6: 1 representative(s), 2 warm-up\n" +
		"DYNAMIC_KERNEL_LIMIT_START=5 DYNAMIC_KERNEL_LIMIT_END=7 TERMINATE_UPON_LIMIT=1\n" +
		"# launches 19-21: 1 representative(s), 2 warm-up\nDYNAMIC_KERNEL_LIMIT_START=20 DYNAMIC_KERNEL_LIMIT_END=22 TERMINATE_UPON_LIMIT=1\n"
	got, err := tracegen.ParseTraceList(text)
	want := []tracegen.TraceRange{{Context: "0x55d2c3a1e4f0", Start: 5, End: 7}, {Start: 20, End: 22}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%+v, %v; want %+v", got, err, want)
	}
	if _, err := tracegen.ParseTraceList("DYNAMIC_KERNEL_LIMIT_START=9 DYNAMIC_KERNEL_LIMIT_END=x\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad line: %v", err)
	}
	if _, err := tracegen.ParseTraceList("# nothing\n"); err == nil {
		t.Error("no range: no error")
	}
}
