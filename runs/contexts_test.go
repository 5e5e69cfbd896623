package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/testkit"
)

// Two CUDA contexts of one trace: the quickstart's, and a copy of it.
const (
	ctxA = "0x55d2c3a1e4f0"
	ctxB = "0x77aa00000001"
)

// addTwoContextTrace stores "two", ready: the quickstart trace's kernels
// 1 to 4 in ctxA, then the same four again in ctxB (ids restart in each
// context).
func addTwoContextTrace(t *testing.T, r *managerRig) {
	t.Helper()
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	dst := filepath.Join(r.bucket, "two", "traces")
	list := string(must(os.ReadFile(filepath.Join(src, "kernelslist.g"))))
	for _, e := range must(os.ReadDir(src)) {
		if name := e.Name(); strings.HasPrefix(name, "kernel-") {
			testkit.CopyFile(t, filepath.Join(src, name), filepath.Join(dst, name))
			testkit.CopyFile(t, filepath.Join(src, name), filepath.Join(dst, strings.Replace(name, ctxA, ctxB, 1)))
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "kernelslist.g"), []byte(list+strings.ReplaceAll(list, ctxA, ctxB)), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := cascade.Trace{ID: "two", State: cascade.TraceReady, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{}}
	if err := r.d.SaveTrace(context.Background(), &tr); err != nil {
		t.Fatal(err)
	}
}

// simulated is the kernel trace files a job's kernel list names, in order.
func simulated(t *testing.T, job runs.Job) []string {
	t.Helper()
	var files []string
	for _, line := range strings.Split(string(must(os.ReadFile(job.KernelList))), "\n") {
		if strings.HasPrefix(line, "kernel-") {
			files = append(files, line)
		}
	}
	return files
}

// TestKernelContexts: kernel ids with their contexts simulate each id in
// its context only; ids alone, every context's launch of them (ids
// restart in each context). The run keeps the pairs, sorted by id; a
// pair the trace lacks, a pair (or an id without contexts) given twice,
// or contexts that do not match the ids one for one, are refused by name.
func TestKernelContexts(t *testing.T) {
	t.Parallel()
	r := newManagerRig(t, 2) // two slots: the runs start without ending
	addTwoContextTrace(t, r)
	r.run()
	ctx := context.Background()

	run, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: "two", SimConfig: simconfigtest.H100,
		KernelIDs: []int{2, 1}, KernelContexts: []string{ctxB, "0x55D2C3A1E4F0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run.KernelContexts, " "); got != ctxA+" "+ctxB || len(run.KernelIDs) != 2 || run.KernelIDs[0] != 1 || run.KernelIDs[1] != 2 {
		t.Fatalf("stored kernels %v in contexts %v; want [1 2] in [%s %s]", run.KernelIDs, run.KernelContexts, ctxA, ctxB)
	}
	job := r.nextStart()
	if got, want := strings.Join(simulated(t, job), " "), "kernel-1-ctx_"+ctxA+".traceg kernel-2-ctx_"+ctxB+".traceg"; got != want || job.Total != 2 {
		t.Fatalf("simulated %q (%d kernels); want %q", got, job.Total, want)
	}

	run, err = r.m.Launch(ctx, runs.LaunchInput{TraceID: "two", SimConfig: simconfigtest.H100, KernelIDs: []int{2}})
	if err != nil || run.KernelContexts != nil {
		t.Fatalf("ids alone: %v, contexts %v", err, run.KernelContexts)
	}
	job = r.nextStart()
	if got, want := strings.Join(simulated(t, job), " "), "kernel-2-ctx_"+ctxA+".traceg kernel-2-ctx_"+ctxB+".traceg"; got != want {
		t.Fatalf("ids alone simulated %q; want %q", got, want)
	}

	for _, c := range []struct {
		ids  []int
		ctxs []string
		want string
	}{
		{[]int{1, 2}, []string{ctxA}, "kernelContexts: 1 contexts for 2 kernel ids"},
		{[]int{4}, []string{"0x99"}, "kernelIds: 4@0x99 is not a kernel of trace \"two\""},
		{nil, []string{ctxA}, "kernelContexts: give kernelIds with them"},
		{[]int{1, 3, 1}, nil, "kernelIds[2]: 1 is given twice (also kernelIds[0])"},
		{[]int{2, 1, 2}, []string{ctxB, ctxA, "0x77AA00000001"}, "kernelIds[2]: 2@" + ctxB + " is given twice (also kernelIds[0])"},
	} {
		_, err := r.m.Launch(ctx, runs.LaunchInput{TraceID: "two", SimConfig: simconfigtest.H100, KernelIDs: c.ids, KernelContexts: c.ctxs})
		if err == nil || !strings.Contains(err.Error(), c.want) || cascade.ErrorCode(err) != cascade.EINVALID {
			t.Errorf("ids %v in %v: %v; want BAD_USER_INPUT %q", c.ids, c.ctxs, err, c.want)
		}
	}
}
