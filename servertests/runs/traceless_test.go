package runs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// writeVecAdd writes a small raw vecAdd-like kernel trace as the v3 tracer
// does (3 blocks of 64 threads, c[i] = a[i] + b[i] on doubles): the
// source tracegen.GenerateLLM builds an LLM-like trace from, as it does
// from the real vecadd-sm61 kernel, at a size a test simulates in
// moments.
func writeVecAdd(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("-kernel name = _Z6vecAddPdS_S_i\n-kernel id = 1\n-grid dim = (3,1,1)\n-block dim = (64,1,1)\n-shmem = 0\n-nregs = 10\n-binary version = 61\n-cuda stream id = 0\n-shmem base_addr = 0x00007f32f1000000\n-local mem base_addr = 0x00007f32ef000000\n-nvbit version = 1.5.3\n-accelsim tracer version = 3\n\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n")
	for blk := range 3 {
		for w := range 2 {
			off := uint64(blk*512 + w*256)
			fmt.Fprintf(&b, "%d 0 0 %d 0008 ffffffff 1 R1 MOV 0 0 \n", blk, w)
			fmt.Fprintf(&b, "%d 0 0 %d 0098 ffffffff 1 R4 LDG.E.64 1 R4 8 1 0x%x 8 \n", blk, w, 0x7f32c5500000+off)
			fmt.Fprintf(&b, "%d 0 0 %d 00a8 ffffffff 1 R6 LDG.E.64 1 R6 8 1 0x%x 8 \n", blk, w, 0x7f32c5600000+off)
			fmt.Fprintf(&b, "%d 0 0 %d 00c8 ffffffff 1 R8 DADD 2 R4 R6 0 \n", blk, w)
			fmt.Fprintf(&b, "%d 0 0 %d 00d8 ffffffff 0 STG.E.64 2 R8 R2 8 1 0x%x 8 \n", blk, w, 0x7f32c56c3600+off)
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

type tlKernel struct {
	KernelID     int
	Name         string
	TraceFile    string
	Grid         struct{ X, Y, Z int }
	Instructions *int64
	Traced       bool
}

type tlTrace struct {
	State           string
	Error           *string
	KernelCount     int
	UntracedKernels int
	Kernels         struct {
		TotalCount int
		Nodes      []tlKernel
	}
}

type tlPlan struct {
	ID       string
	Samples  int
	Untraced *struct {
		Count    int
		Launches []struct{ KernelID int }
		Note     string
	}
	TraceList   string
	TraceRanges []struct {
		Context                                       *string
		Start, End, FirstLaunch, LastLaunch, Launches int
		Representatives, Warming                      int
	}
	Strata []struct {
		Name            string
		Size            int
		MeanDurationNs  *float64
		CvInstructions  float64
		Representatives []struct{ Launch, KernelID int }
	}
}

// TestTraceLessEndToEnd: trace less next time, end to end. A full
// LLM-like trace (tracegen, uploaded raw, post-processed by the built-in
// post-processor) is planned; the trace of only its plan's traceRanges,
// as the tracer writes it run by run (tracegen.TraceLess), is uploaded
// and becomes READY with the same launches and statistics, the
// untraced ones marked; planned alike, it gives the same plan, and its
// sampled run the same projection, kernel for kernel, as the full
// trace's. What it cannot simulate is refused, naming what is missing.
func TestTraceLessEndToEnd(t *testing.T) {
	t.Parallel()
	bin := testkit.Program(t, "./cmd/cascade")
	sim := fakesim.Build(t)
	// A TITAN X of a small L2, so that the L2 warming windows of this
	// trace's small kernels leave launches out (smallL2Configs).
	const cfg = "SM6_SMALLL2"
	cfgDir := smallL2Configs(t, simconfigtest.TitanX, cfg)
	s := servertest.Server(t, func(c *app.Config) {
		c.SimCmd = []string{"env", "FAKESIM_MODE=ok", sim}
		c.SimConfigsDir = cfgDir
		c.PostprocessCmd = []string{bin, "postprocess"}
	})
	full := filepath.Join(t.TempDir(), "full")
	res, err := tracegen.GenerateLLM(context.Background(), full, tracegen.LLMConfig{From: writeVecAdd(t), Launches: 90, Layers: 1, Kinds: 4, DecodeSteps: 12, OddEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	launches := len(res.Launches)
	put := func(src, id string) tlTrace {
		t.Helper()
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: id}); err != nil {
			t.Fatal(err)
		}
		var tr tlTrace
		testkit.Eventually(t, 60*time.Second, id+" ready", func() bool {
			var r struct{ Trace *tlTrace }
			s.MustDo(t, `query($id: ID!) { trace(id: $id) { state error kernelCount untracedKernels
				kernels(first: 1000) { totalCount nodes { kernelId name traceFile grid { x y z } instructions traced } } } }`, map[string]any{"id": id}, &r)
			if r.Trace != nil && r.Trace.State == "FAILED" {
				t.Fatalf("%s failed: %s", id, *r.Trace.Error)
			}
			if r.Trace != nil {
				tr = *r.Trace
			}
			return r.Trace != nil && r.Trace.State == "READY"
		})
		return tr
	}
	plan := func(id string, warmup int) tlPlan {
		t.Helper()
		var r struct{ PlanSampling tlPlan }
		s.MustDo(t, `mutation($id: ID!, $w: Int) { planSampling(traceId: $id, target: {error: 0.03}, warmup: $w) { id samples traceList(simConfig: "`+cfg+`")
			traceRanges(simConfig: "`+cfg+`") { context start end firstLaunch lastLaunch launches representatives warming }
			strata { name size meanDurationNs cvInstructions representatives { launch kernelId } }
			untraced { count launches { kernelId } note } } }`, map[string]any{"id": id, "w": warmup}, &r)
		return r.PlanSampling
	}

	// The full trace, planned.
	ft := put(full, "full")
	if ft.KernelCount != launches || ft.UntracedKernels != 0 || ft.Kernels.TotalCount != launches {
		t.Fatalf("full trace: %d kernels (%d listed), %d untraced; want %d", ft.KernelCount, ft.Kernels.TotalCount, ft.UntracedKernels, launches)
	}
	fp := plan("full", 1)
	if len(fp.TraceRanges) < 2 || fp.Samples >= launches {
		t.Fatalf("plan %+v: want a few ranges", fp)
	}

	// Trace less: the traceList's ranges, one tracer run each.
	ranges, err := tracegen.ParseTraceList(fp.TraceList)
	if err != nil || len(ranges) != len(fp.TraceRanges) {
		t.Fatalf("traceList %v:\n%s", err, fp.TraceList)
	}
	traced := map[int]bool{}
	for i, rg := range fp.TraceRanges {
		if ranges[i] != (tracegen.TraceRange{Start: rg.Start, End: rg.End}) {
			t.Fatalf("traceList range %d: %+v, the plan's %+v", i, ranges[i], rg)
		}
		for id := rg.Start; id <= rg.End; id++ {
			traced[id] = true
		}
	}
	less := filepath.Join(t.TempDir(), "less")
	if _, err := tracegen.TraceLess(full, less, ranges); err != nil {
		t.Fatal(err)
	}
	lt := put(less, "less")
	if lt.KernelCount != len(traced) || lt.Kernels.TotalCount != launches || lt.UntracedKernels != launches-len(traced) || lt.UntracedKernels == 0 {
		t.Fatalf("trace-less trace: kernelCount %d (%d listed), %d untraced; want %d (the kernel lines of kernelslist.g), %d listed and %d untraced", lt.KernelCount, lt.Kernels.TotalCount, lt.UntracedKernels, len(traced), launches, launches-len(traced))
	}
	if len(lt.Kernels.Nodes) != len(ft.Kernels.Nodes) {
		t.Fatalf("%d kernels listed, the full trace %d", len(lt.Kernels.Nodes), len(ft.Kernels.Nodes))
	}
	var untraced []int
	for i, k := range lt.Kernels.Nodes {
		f := ft.Kernels.Nodes[i]
		if k.Traced != traced[k.KernelID] || !f.Traced {
			t.Errorf("kernel %d: traced %v, want %v", k.KernelID, k.Traced, traced[k.KernelID])
		}
		f.Traced = k.Traced
		if !reflect.DeepEqual(k, f) {
			t.Errorf("kernel %d: %+v, the full trace's %+v", k.KernelID, k, f)
		}
		if !k.Traced {
			untraced = append(untraced, k.KernelID)
		}
	}

	// The same plan, of the same launches and timing.
	lp := plan("less", 1)
	if !reflect.DeepEqual(lp.TraceRanges, fp.TraceRanges) || !reflect.DeepEqual(lp.Strata, fp.Strata) || lp.Samples != fp.Samples || lp.Untraced != nil || fp.Untraced != nil {
		t.Fatalf("the trace-less trace's plan %+v\nis not the full trace's %+v", lp, fp)
	}

	// Its sampled run projects what the full trace's does.
	sampled := func(trace, plan string) sampledRunView {
		var r struct{ LaunchRun sampledRunView }
		s.MustDo(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { `+sampledRunFields+` } }`, map[string]any{"in": map[string]any{
			"traceId": trace, "simConfig": cfg, "sampling": map[string]any{"plan": plan}}}, &r)
		return waitSampled(t, s, r.LaunchRun.ID, "SUCCEEDED")
	}
	fr, lr := sampled("full", fp.ID), sampled("less", lp.ID)
	if fr.Sampling.ProjectedCycles == nil || lr.Sampling.ProjectedCycles == nil || *fr.Sampling.ProjectedCycles != *lr.Sampling.ProjectedCycles ||
		*fr.Sampling.CiLowCycles != *lr.Sampling.CiLowCycles || *fr.Sampling.CiHighCycles != *lr.Sampling.CiHighCycles {
		t.Fatalf("projections: full %v [%v, %v], trace-less %v [%v, %v]", ptrF(fr.Sampling.ProjectedCycles), ptrF(fr.Sampling.CiLowCycles), ptrF(fr.Sampling.CiHighCycles),
			ptrF(lr.Sampling.ProjectedCycles), ptrF(lr.Sampling.CiLowCycles), ptrF(lr.Sampling.CiHighCycles))
	}
	if len(lr.KernelPage.Nodes) != launches || !reflect.DeepEqual(lr.KernelPage.Nodes, fr.KernelPage.Nodes) {
		t.Errorf("the trace-less trace's sampled kernels differ from the full trace's")
	}
	t.Logf("%d launches, %d traced in %d ranges: both project %.0f cycles", launches, len(traced), len(ranges), *lr.Sampling.ProjectedCycles)

	// What it cannot simulate is refused, saying what is missing.
	refused := func(what, wantText string, in map[string]any) {
		t.Helper()
		in["traceId"], in["simConfig"] = "less", simconfigtest.TitanX
		errs := s.Do(t, `mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }`, map[string]any{"in": in}, nil)
		if len(errs) == 0 || !strings.Contains(errs[0].Message, wantText) {
			t.Errorf("%s: errors %+v, want one saying %q", what, errs, wantText)
		}
	}
	refused("a full run", fmt.Sprintf("no kernel trace of %d of its %d launches", launches-len(traced), launches), map[string]any{})
	refused("untraced kernelIds", fmt.Sprintf("kernelIds: %d, %d: trace \"less\" has no kernel trace of them", untraced[0], untraced[1]),
		map[string]any{"kernelIds": []int{untraced[1], ranges[0].Start, untraced[0]}})
	refused("the full trace's plan", fmt.Sprintf("sampling.plan: plan %q is a plan of trace \"full\", not of \"less\": plans are a trace's", fp.ID),
		map[string]any{"sampling": map[string]any{"plan": fp.ID}})
	refused("a validated sampled run", "sampling.validate", map[string]any{"sampling": map[string]any{"plan": lp.ID, "validate": true}})
	refused("a split run", "split: trace \"less\" has no kernel trace", map[string]any{"split": map[string]any{"segments": 2}})
	wide := plan("less", 6) // more warm-up: launches before the traced ranges
	// The plan says so when it is made, naming what the launch refuses.
	if wide.Untraced == nil || wide.Untraced.Count == 0 || len(wide.Untraced.Launches) == 0 {
		t.Fatalf("a plan needing untraced launches says nothing: %+v", wide.Untraced)
	}
	first := wide.Untraced.Launches[0].KernelID
	if traced[first] || !strings.Contains(wide.Untraced.Note, fmt.Sprintf("(kernel ids %d", first)) {
		t.Errorf("untraced %+v: launch %d is traced, or the note does not name it", wide.Untraced, first)
	}
	refused("a plan needing untraced launches", fmt.Sprintf("sampling.plan: plan %q simulates launches the trace has no kernel trace of: kernel ids %d", wide.ID, first),
		map[string]any{"sampling": map[string]any{"plan": wide.ID}})
	// Traced kernels simulate as on any trace.
	var ok struct{ LaunchRun struct{ ID string } }
	s.MustDo(t, `mutation($ids: [Int!]) { launchRun(input: {traceId: "less", simConfig: "`+simconfigtest.TitanX+`", kernelIds: $ids}) { id } }`,
		map[string]any{"ids": []int{ranges[0].Start}}, &ok)
	waitFull(t, s, ok.LaunchRun.ID)

	// Traced without the warming windows (warming: false): the segments
	// alone, fewer launches; its segments say they were warmed in part,
	// and its interval is the wider one of segments not warmed.
	var bare struct {
		SamplingPlan struct {
			TraceList   string
			TraceRanges []struct{ Start, End, Warming int }
		}
	}
	s.MustDo(t, `query($id: ID!) { samplingPlan(id: $id) { traceList(warming: false) traceRanges(warming: false) { start end warming } } }`, map[string]any{"id": fp.ID}, &bare)
	bareRanges, err := tracegen.ParseTraceList(bare.SamplingPlan.TraceList)
	if err != nil || len(bareRanges) != len(bare.SamplingPlan.TraceRanges) || !strings.Contains(bare.SamplingPlan.TraceList, "# Without the launches the L2 warming") {
		t.Fatalf("traceList(warming: false) %v:\n%s", err, bare.SamplingPlan.TraceList)
	}
	bareTraced := 0
	for _, rg := range bare.SamplingPlan.TraceRanges {
		bareTraced += rg.End - rg.Start + 1
		if rg.Warming != 0 {
			t.Errorf("traceRanges(warming: false): %+v", rg)
		}
	}
	if bareTraced >= len(traced) {
		t.Errorf("without warming %d launches traced, with it %d: want fewer", bareTraced, len(traced))
	}
	if errs := s.Do(t, `query($id: ID!) { samplingPlan(id: $id) { traceRanges(warming: false, simConfig: "`+cfg+`") { start } } }`, map[string]any{"id": fp.ID}, nil); len(errs) == 0 || !strings.Contains(errs[0].Message, "simConfig:") {
		t.Errorf("a config without warming: %+v, want it refused naming simConfig", errs)
	}
	bareDir := filepath.Join(t.TempDir(), "bare")
	if _, err := tracegen.TraceLess(full, bareDir, bareRanges); err != nil {
		t.Fatal(err)
	}
	put(bareDir, "bare")
	br := sampled("bare", plan("bare", 1).ID)
	inPart := 0
	for _, seg := range br.Sampling.Segments {
		for _, h := range seg.History {
			if strings.Contains(h, "L2 warmed in part: ") {
				inPart++
			}
		}
	}
	// (That such a run states the cold allowance is sampled's TestWarming:
	// on the stand-in, whose cycles move with a segment's list, the
	// intervals of the two traces differ in their spread as well.)
	if inPart == 0 {
		t.Errorf("traced without warming: no segment says it was warmed in part")
	}
	t.Logf("without warming: %d launches traced (with it %d), %d segments warmed in part, projected %.0f ±%.2f %% (the whole trace's %.0f)",
		bareTraced, len(traced), inPart, *br.Sampling.ProjectedCycles, 100**br.Sampling.ExpectedError, *fr.Sampling.ProjectedCycles)
}
