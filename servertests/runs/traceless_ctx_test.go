package runs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/upload"
)

// The two-context trace: twoCtxLaunches launches in each of two CUDA
// contexts, each numbering its kernels from 1, the quickstart's four
// kernels in turn, two of them on a larger grid in the second (so that
// both have representatives).
const twoCtxLaunches = 24

var twoCtxs = [2]string{"0x55d2c3a1e4f0", "0x7f00aa001000"}

// writeTwoContextTrace writes the two-context trace, processed (ready
// at once), with the kernel traces of the launches traced says only
// (kernelslist.g names those), and every launch's stats and timing: a
// trace taken with DYNAMIC_KERNEL_LIMIT ranges when traced says no to
// some.
func writeTwoContextTrace(t *testing.T, traced func(ctx string, id int) bool) string {
	t.Helper()
	qs := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "traces")
	src := t.TempDir()
	tr := filepath.Join(src, "traces")
	if err := os.MkdirAll(tr, 0o755); err != nil {
		t.Fatal(err)
	}
	type kind struct {
		name        string
		grid, block [3]int
		insts       int
		durationNs  float64
	}
	kinds := []kind{
		{"_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii", [3]int{2, 1, 1}, [3]int{64, 1, 1}, 48, 3100},
		{"_Z14gemm_bf16_tileILi64ELi64EEvPK13__nv_bfloat16S2_PS0_iii", [3]int{2, 2, 1}, [3]int{128, 1, 1}, 208, 9800},
		{"_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EEEvPT_PKS3_i", [3]int{3, 1, 1}, [3]int{64, 1, 1}, 60, 2400},
		{"_Z19residual_add_kernelP13__nv_bfloat16PKS_i", [3]int{2, 1, 1}, [3]int{32, 1, 1}, 14, 1500},
	}
	type row struct {
		KernelID   int     `json:"kernel_id"`
		Context    string  `json:"context"`
		KernelName string  `json:"kernel_name"`
		DurationNs float64 `json:"duration_ns"`
	}
	var rows []row
	var list strings.Builder
	list.WriteString("MemcpyHtoD,0x00007f1c2e000000,8192\n")
	files := map[string]string{}
	for c, ctx := range twoCtxs {
		stats := "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"
		for i := 1; i <= twoCtxLaunches; i++ {
			q := (i - 1) % len(kinds)
			k := kinds[q]
			name := fmt.Sprintf("kernel-%d-ctx_%s", i, ctx)
			if traced(ctx, i) {
				b, err := os.ReadFile(filepath.Join(qs, fmt.Sprintf("kernel-%d-ctx_0x55d2c3a1e4f0.traceg", q+1)))
				if err != nil {
					t.Fatal(err)
				}
				files["traces/"+name+".traceg"] = strings.Replace(string(b), fmt.Sprintf("-kernel id = %d\n", q+1), fmt.Sprintf("-kernel id = %d\n", i), 1)
				list.WriteString(name + ".traceg\n")
			}
			g, bl := k.grid, k.block
			if c == 1 && q < 2 { // strata of the second context's own
				g[0]++
			}
			stats += fmt.Sprintf("%s.trace, %s, %d, %d, %d, %d, %d, %d, %d, %d, %d,%d\n", name, k.name,
				g[0], g[1], g[2], g[0]*g[1]*g[2], bl[0], bl[1], bl[2], bl[0]*bl[1]*bl[2], k.insts, k.insts)
			d := k.durationNs * (1 + 0.002*float64(i%3) + 0.01*float64(c))
			if (i/4)%3 == 2 {
				d *= 2.5
			}
			rows = append(rows, row{KernelID: i, Context: ctx, KernelName: k.name, DurationNs: d})
		}
		files["traces/stats_ctx_"+ctx] = stats
	}
	files["traces/kernelslist.g"] = list.String()
	files["metadata.json"] = `{"run_name": "two", "model": "two-context-test", "gpu": "NVIDIA H100 80GB HBM3", "trace_gpu_arch": "sm_90", "real_timing": "real_timing.json"}`
	writeTraceFiles(t, src, files, rows)
	return src
}

// ctxPlan is what TestTraceLessTwoContexts reads of a plan.
type ctxPlan struct {
	ID       string
	Segments []struct {
		Context    *string
		Start, End int
	}
	TraceRanges []struct {
		Context                 *string
		Start, End, FirstLaunch int
		LastLaunch, Warming     int
	}
	Untraced *struct {
		Count    int
		Launches []struct {
			Launch, KernelID int
			Context          *string
		}
		Ranges []struct {
			Context    *string
			Start, End int
		}
		Note string
	}
}

// TestTraceLessTwoContexts: trace less next time on a trace of two CUDA
// contexts that both number their kernels from 1. The trace taken again
// with only its plan's traceRanges holds some kernel id's trace in one
// context and not in the other; every check compares kernel id and
// context: planned as traced, the plan says nothing and its sampled run
// projects what the full trace's does; kernelIds naming that id are
// refused, naming the context it is untraced in; planned with another
// target, the plan names what it would simulate untraced, and its
// sampled run is refused naming the same launches.
func TestTraceLessTwoContexts(t *testing.T) {
	t.Parallel()
	// A segment names each of its ids' context (Run.kernelContexts), so
	// it simulates its range's launches only (checked below, by count).
	// The stand-in gives a kernel the cycles of its place in the list, so
	// a segment whose L2 is warmed (a warming kernel first) differs from
	// one that is not: the trace-less trace must hold the launches its
	// segments' warming reads (KernelRange.warming). The config is H100
	// with an L2 of 160 lines, so that a window is a few of these small
	// launches and the ranges leave some out.
	const cfg = "SM90_SMALLL2"
	s := sampledServer(t, "", []string{"FAKESIM_MODE=ok"}, func(c *app.Config) {
		c.SimConfigsDir = smallL2Configs(t, simconfigtest.H100, cfg)
	})
	put := func(id string, traced func(ctx string, id int) bool) {
		t.Helper()
		if _, err := upload.Upload(context.Background(), upload.Options{Source: writeTwoContextTrace(t, traced), PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, id+" ready", func() bool {
			var r struct{ Trace *struct{ State string } }
			s.MustDo(t, `query($id: ID!) { trace(id: $id) { state } }`, map[string]any{"id": id}, &r)
			return r.Trace != nil && r.Trace.State == "READY"
		})
	}
	plan := func(trace string, target float64) ctxPlan {
		t.Helper()
		var r struct{ PlanSampling ctxPlan }
		s.MustDo(t, `mutation($id: ID!, $e: Float, $c: String) { planSampling(traceId: $id, target: {error: $e}, warmup: 1) { id
			segments { context start end } traceRanges(simConfig: $c) { context start end firstLaunch lastLaunch warming }
			untraced { count launches { launch kernelId context } ranges { context start end } note } } }`, map[string]any{"id": trace, "e": target, "c": cfg}, &r)
		return r.PlanSampling
	}
	put("two", func(string, int) bool { return true })
	fp := plan("two", 0.05)
	if fp.Untraced != nil {
		t.Fatalf("a plan of the trace traced whole: %+v", fp.Untraced)
	}
	type key struct {
		ctx string
		id  int
	}
	traced := map[key]bool{}
	for _, rg := range fp.TraceRanges {
		for id := rg.Start; id <= rg.End; id++ {
			traced[key{*rg.Context, id}] = true
		}
	}
	put("two-less", func(ctx string, id int) bool { return traced[key{ctx, id}] })

	// An id traced in one context and not in the other.
	both, half := 0, 0
	var in, out string
	for id := 1; id <= twoCtxLaunches; id++ {
		a, b := traced[key{twoCtxs[0], id}], traced[key{twoCtxs[1], id}]
		switch {
		case a && b && both == 0:
			both = id
		case a != b && half == 0:
			half, in, out = id, twoCtxs[0], twoCtxs[1]
			if b {
				in, out = out, in
			}
		}
	}
	if half == 0 || both == 0 {
		t.Fatalf("ranges %+v: want an id traced in both contexts and one traced in one", fp.TraceRanges)
	}
	t.Logf("kernel %d traced in %s, not in %s; kernel %d in both", half, in, out, both)

	// Planned as traced: nothing to say, and the same projection.
	lp := plan("two-less", 0.05)
	if lp.Untraced != nil || !reflect.DeepEqual(lp.TraceRanges, fp.TraceRanges) {
		t.Fatalf("the trace-less trace planned as traced: %+v, ranges %+v (traced %+v)", lp.Untraced, lp.TraceRanges, fp.TraceRanges)
	}
	sampled := func(trace, plan string) sampledRunView {
		var r struct{ LaunchRun sampledRunView }
		s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+sampledRunFields+` } }`, map[string]any{"in": map[string]any{
			"traceId": trace, "simConfig": cfg, "sampling": map[string]any{"plan": plan}}}, &r)
		return waitSampled(t, s, r.LaunchRun.ID, "SUCCEEDED")
	}
	fr, lr := sampled("two", fp.ID), sampled("two-less", lp.ID)
	// Each segment of the whole trace simulates its range's launches, in
	// their context only.
	inRanges, simulated, warming := 0, 0, 0
	for _, rg := range fp.TraceRanges {
		inRanges += rg.End - rg.Start + 1 - rg.Warming
		warming += rg.Warming
	}
	if warming == 0 {
		t.Errorf("ranges %+v: no launch traced for warming", fp.TraceRanges)
	}
	for _, seg := range fr.Sampling.Segments {
		simulated += seg.Progress.KernelsTotal
	}
	if simulated != inRanges {
		t.Errorf("the segments simulated %d launches; their ranges hold %d", simulated, inRanges)
	}
	if fr.Sampling.ProjectedCycles == nil || lr.Sampling.ProjectedCycles == nil || *fr.Sampling.ProjectedCycles != *lr.Sampling.ProjectedCycles {
		t.Errorf("projections: full %v, trace-less %v", ptrF(fr.Sampling.ProjectedCycles), ptrF(lr.Sampling.ProjectedCycles))
	}
	// Each segment warmed the same lines from the same launches on both.
	warmed := func(r sampledRunView) map[string]string {
		out := map[string]string{}
		for _, seg := range r.Sampling.Segments {
			for _, h := range seg.History {
				if i := strings.Index(h, "L2 warm"); i >= 0 {
					out[cascade.Deref(seg.Label)] = h[i:]
				}
			}
		}
		return out
	}
	if fw, lw := warmed(fr), warmed(lr); len(fw) == 0 || !reflect.DeepEqual(fw, lw) {
		t.Errorf("warming by segment: whole %q, trace-less %q", fw, lw)
	}

	// kernelIds: every context's launch of an id must be traced.
	launch := func(ids []int) []string {
		t.Helper()
		var msgs []string
		for _, e := range s.Do(t, `mutation($ids: [Int!]) { launchRun(input: {traceId: "two-less", simConfig: "`+simconfigtest.H100+`", kernelIds: $ids}) { id } }`,
			map[string]any{"ids": ids}, nil) {
			msgs = append(msgs, e.Message)
		}
		return msgs
	}
	want := fmt.Sprintf("kernelIds: %d@%s: trace \"two-less\" has no kernel trace of them", half, out)
	if errs := launch([]int{both, half}); len(errs) != 1 || !strings.Contains(errs[0], want) {
		t.Errorf("kernelIds %d, %d: %q, want %q", both, half, errs, want)
	}
	if errs := launch([]int{both}); len(errs) != 0 {
		t.Errorf("kernelIds %d, traced in both contexts: %q", both, errs)
	}

	// Another target: the plan names its untraced launches by context
	// (those it simulates: its traceRanges also hold the untraced
	// launches its segments' L2 warming reads).
	wide := plan("two-less", 0.01)
	var names []string
	for _, rg := range wide.Segments {
		for id := rg.Start; id <= rg.End; id++ {
			if !traced[key{*rg.Context, id}] {
				names = append(names, fmt.Sprintf("%d@%s", id, *rg.Context))
			}
		}
	}
	u := wide.Untraced
	if len(names) == 0 || u == nil || u.Count != len(names) || len(u.Launches) != len(names) {
		t.Fatalf("plan of another target, %d untraced launches in its segments %+v: %+v", len(names), wide.Segments, u)
	}
	for i, l := range u.Launches {
		if got := fmt.Sprintf("%d@%s", l.KernelID, *l.Context); got != names[i] {
			t.Errorf("untraced launch %d: %s, want %s", i, got, names[i])
		}
	}
	list := strings.Join(names[:min(len(names), 20)], ", ")
	if !strings.Contains(u.Note, "(kernel ids "+list) {
		t.Errorf("note %q: want it to name %s", u.Note, list)
	}
	errs := s.Do(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"traceId": "two-less", "simConfig": simconfigtest.H100, "sampling": map[string]any{"plan": wide.ID}}}, nil)
	if want := fmt.Sprintf("sampling.plan: plan %q simulates launches the trace has no kernel trace of: kernel ids %s", wide.ID, list); len(errs) == 0 || !strings.Contains(errs[0].Message, want) {
		t.Errorf("sampled run of the plan of another target: %+v, want %q", errs, want)
	}
}

// smallL2Configs writes the test configs and one more, name: base with an
// L2 of one 128-byte line per memory sub-partition (160 lines on H100,
// 24 on TITAN X), so that on the test traces' small kernels a segment's
// L2 warming window is a few launches, as on real ones it is a few
// launches of far larger footprints. It returns the configs directory.
func smallL2Configs(t *testing.T, base, name string) string {
	t.Helper()
	dir := simconfigtest.Write(t, t.TempDir())
	files, err := os.ReadDir(filepath.Join(dir, base))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range files {
		f := e.Name()
		b, err := os.ReadFile(filepath.Join(dir, base, f))
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`(?m)^-gpgpu_cache:dl2 .*$`).ReplaceAllString(string(b), "-gpgpu_cache:dl2 S:1:128:1,L:B:m:L:P,A:192:4,32:0,32")
		simconfigtest.WriteFile(t, filepath.Join(dir, name, f), text)
	}
	return dir
}
