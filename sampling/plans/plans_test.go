package plans_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// timingRow is a row of real_timing.json.
type timingRow struct {
	KernelID   int      `json:"kernel_id"`
	Context    string   `json:"context,omitempty"`
	DurationNs *float64 `json:"duration_ns,omitempty"`
}

// addTrace stores a READY trace with the kernels and writes its
// real_timing.json, when rows is not nil, alone in its bucket directory.
func addTrace(t *testing.T, d *db.DB, bucket, id string, ks []cascade.Kernel, rows []timingRow) {
	t.Helper()
	ctx := context.Background()
	tr := &cascade.Trace{ID: id, State: cascade.TraceReady, Prompts: []string{}, HasRealTiming: rows != nil, KernelCount: len(ks)}
	if err := d.SaveTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceKernels(ctx, id, ks); err != nil {
		t.Fatal(err)
	}
	if rows == nil {
		return
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(bucket, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bucket, id, "real_timing.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// llm is a trace of n launches in two contexts (the second's kernel ids
// from 1 again, spelt in upper case as a stats file name may), 9 kernel
// names, every 50th launch without a timing row.
func llm(n int) ([]cascade.Kernel, []timingRow) {
	var ks []cascade.Kernel
	var rows []timingRow
	for i := range n {
		ctx, id := "0x6165BDD7EC90", i+1
		if i >= n/2 {
			ctx, id = "0x7f00aa", i-n/2+1
		}
		name := fmt.Sprintf("_Z6kernel%dPf", i%9)
		grid := 16 << (i % 9 % 3)
		ks = append(ks, cascade.Kernel{KernelID: id, Context: cascade.Ptr(ctx), Name: name, TraceFile: fmt.Sprintf("kernel-%d-ctx_%s.trace", id, ctx),
			GridX: grid, GridY: 1, GridZ: 1, BlockX: 256, BlockY: 1, BlockZ: 1, Instructions: cascade.Ptr(int64(grid * 1000))})
		if i%50 == 7 {
			continue
		}
		d := float64(grid*100) * (1 + 0.2*math.Sin(float64(i)*0.37))
		rows = append(rows, timingRow{KernelID: id, Context: "0x" + map[bool]string{true: "6165bdd7ec90", false: "7f00aa"}[i < n/2], DurationNs: &d})
	}
	return ks, rows
}

// TestPlanStoredAndRead: a ready trace with real timing, of more
// kernels than a page, whose bucket directory holds only its timing
// file, plans with STEM and a step of warm-up (9 launches) by default;
// the plan is stored and reads back;
// a trace without timing plans with Sieve.
func TestPlanStoredAndRead(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		bucket := t.TempDir()
		ks, rows := llm(12000)
		addTrace(t, d, bucket, "timed", ks, rows)
		addTrace(t, d, bucket, "untimed", ks, nil)
		s := &plans.Service{Store: d, BucketDir: bucket}

		p, err := s.Plan(ctx, plans.Request{TraceID: "timed"})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID == "" || p.TraceID != "timed" || p.Method != cascade.SamplingSTEM || p.Basis != cascade.BasisDuration ||
			p.Launches != 12000 || p.UntimedLaunches != 240 || p.Warmup != 9 || !p.WarmupStep {
			t.Fatalf("plan %s of %s: %s on %s, %d launches, %d untimed, warm-up %d", p.ID, p.TraceID, p.Method, p.Basis, p.Launches, p.UntimedLaunches, p.Warmup)
		}
		stored, err := s.SamplingPlan(ctx, p.ID)
		if err != nil || stored.Samples != p.Samples || stored.Seq != p.Seq || stored.ExpectedError != p.ExpectedError {
			t.Fatalf("stored %+v, %v", stored, err)
		}
		strata, err := s.SamplingStrata(ctx, p.ID)
		if err != nil || len(strata) != len(p.Strata) || !reflect.DeepEqual(strata[0].Members, p.Strata[0].Members) {
			t.Fatalf("%d strata read back of %d, %v", len(strata), len(p.Strata), err)
		}

		q, err := s.Plan(ctx, plans.Request{TraceID: "untimed", Target: sampling.Target{Error: 0.05}, Warmup: cascade.Ptr(0)})
		if err != nil {
			t.Fatal(err)
		}
		if q.Method != cascade.SamplingSieve || q.Basis != cascade.BasisInstructions || *q.TargetError != 0.05 || q.Warmup != 0 || q.SimulatedLaunches != q.Samples {
			t.Fatalf("untimed: %s on %s, target %v, warm-up %d, %d simulated of %d samples", q.Method, q.Basis, q.TargetError, q.Warmup, q.SimulatedLaunches, q.Samples)
		}
		r, err := s.Plan(ctx, plans.Request{TraceID: "timed", Method: cascade.SamplingSieve, Target: sampling.Target{Instructions: 1 << 30}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Method != cascade.SamplingSieve || *r.TargetInstructions != 1<<30 || r.SimulatedInstructions > 1<<30 {
			t.Fatalf("sieve under a budget: %+v", r)
		}
		list, err := s.SamplingPlans(ctx, "timed")
		if err != nil || len(list) != 2 || list[0].ID != r.ID || list[1].ID != p.ID {
			t.Fatalf("plans of timed: %+v, %v", list, err)
		}
	})
}

// TestPlanWarmupStep: with WarmupStep each representative is warmed up
// by one step of the program (the launches back to where its kernel names
// repeat: 9 on llm's traces), and the plan says how long that step is.
func TestPlanWarmupStep(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(900)
	addTrace(t, d, bucket, "timed", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket}
	p, err := s.Plan(ctx, plans.Request{TraceID: "timed", WarmupStep: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Warmup != 9 || !p.WarmupStep {
		t.Fatalf("warm-up %d launches (a step: %v), want a step of 9", p.Warmup, p.WarmupStep)
	}
	// The plan says so when read back, and one of launches does not.
	if got, err := s.SamplingPlan(ctx, p.ID); err != nil || !got.WarmupStep || got.Warmup != 9 {
		t.Fatalf("plan read back: warm-up %d, a step %v, %v", got.Warmup, got.WarmupStep, err)
	}
	q, err := s.Plan(ctx, plans.Request{TraceID: "timed", Warmup: cascade.Ptr(9)})
	if err != nil || q.WarmupStep {
		t.Fatalf("a plan of 9 launches of warm-up says it is a step: %v, %v", q.WarmupStep, err)
	}
	longest := 0
	for _, st := range p.Strata {
		for _, r := range st.Representatives {
			longest = max(longest, len(r.Warmup))
			if n := len(r.Warmup); n > 0 && r.Warmup[n-1].Launch != r.Launch-1 {
				t.Fatalf("representative %d: warm-up %+v does not end with the launch before it", r.Launch, r.Warmup)
			}
		}
	}
	if longest < 2 || longest > 9 {
		t.Fatalf("the longest warm-up is %d launches, want 2 to 9", longest)
	}
}

// TestPlanRefuses: NOT_FOUND for an unknown trace; BAD_USER_INPUT for a
// trace not READY, an unknown method, a target or warm-up out of range,
// and STEM without timing, each message starting with the argument at
// fault, as the web UI reads it (the trace's state is the form's).
func TestPlanRefuses(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(100)
	addTrace(t, d, bucket, "timed", ks, rows)
	addTrace(t, d, bucket, "untimed", ks, nil)
	if err := d.SaveTrace(ctx, &cascade.Trace{ID: "busy", State: cascade.TraceProcessing, Prompts: []string{}}); err != nil {
		t.Fatal(err)
	}
	s := &plans.Service{Store: d, BucketDir: bucket}
	for _, tt := range []struct {
		name string
		req  plans.Request
		code string
		says string // how the message starts: the argument at fault
	}{
		{"unknown trace", plans.Request{TraceID: "nope"}, cascade.ENOTFOUND, "traceId: "},
		{"not ready", plans.Request{TraceID: "busy"}, cascade.ECONFLICT, "traceId: "},
		{"unknown method", plans.Request{TraceID: "timed", Method: "PKS"}, cascade.EINVALID, "method: "},
		{"error of 0.5 below 0", plans.Request{TraceID: "timed", Target: sampling.Target{Error: -0.5}}, cascade.EINVALID, "target: "},
		{"error of 100 %", plans.Request{TraceID: "timed", Target: sampling.Target{Error: 1}}, cascade.EINVALID, "target: "},
		{"budget below 0", plans.Request{TraceID: "timed", Target: sampling.Target{Instructions: -1}}, cascade.EINVALID, "target: "},
		{"budget too small", plans.Request{TraceID: "timed", Target: sampling.Target{Instructions: 10}}, cascade.EINVALID, "target: "},
		{"warm-up below 0", plans.Request{TraceID: "timed", Warmup: cascade.Ptr(-1)}, cascade.EINVALID, "warmup: "},
		{"warm-up too long", plans.Request{TraceID: "timed", Warmup: cascade.Ptr(sampling.MaxWarmup + 1)}, cascade.EINVALID, "warmup: "},
		{"stem without timing", plans.Request{TraceID: "untimed", Method: cascade.SamplingSTEM}, cascade.EINVALID, "method: STEM needs real timing"},
		{"warm-up and a step of warm-up", plans.Request{TraceID: "timed", Warmup: cascade.Ptr(2), WarmupStep: true}, cascade.EINVALID, "warmupStep: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Plan(ctx, tt.req)
			if cascade.ErrorCode(err) != tt.code {
				t.Fatalf("err %v, want %s", err, tt.code)
			}
			if !strings.HasPrefix(cascade.ErrorMessage(err), tt.says) {
				t.Fatalf("err %q, want it to start %q", cascade.ErrorMessage(err), tt.says)
			}
		})
	}
	if list, err := d.SamplingPlans(ctx, "timed"); err != nil || len(list) != 0 {
		t.Fatalf("refused plans stored: %v, %v", list, err)
	}
}

// TestInputJoinsTiming: a kernel takes the rows naming its context (in
// any spelling), else those naming none; a kernel without a context every
// row of its id; several rows their mean; rows without a duration none.
func TestInputJoinsTiming(t *testing.T) {
	d := dbtest.DB(t)
	bucket := t.TempDir()
	f := func(v float64) *float64 { return &v }
	k := func(id int, ctx *string) cascade.Kernel {
		return cascade.Kernel{KernelID: id, Context: ctx, Name: "k", TraceFile: "x", GridX: 1, GridY: 1, GridZ: 1, BlockX: 32, BlockY: 1, BlockZ: 1}
	}
	ks := []cascade.Kernel{k(1, cascade.Ptr("0xA")), k(2, cascade.Ptr("0xA")), k(3, nil), k(4, cascade.Ptr("0xa")), k(5, nil)}
	rows := []timingRow{
		{1, "0xa", f(100)}, {1, "", f(999)},
		{2, "", f(200)}, {2, "", f(400)}, {2, "0xb", f(7)},
		{3, "0xa", f(10)}, {3, "0xb", f(30)},
		{5, "", nil},
	}
	addTrace(t, d, bucket, "join", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket}
	tr, err := d.Trace(context.Background(), "join")
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Input(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, l := range in.Launches {
		got = append(got, l.DurationNs)
	}
	if want := []float64{100, 300, 20, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("durations %v, want %v", got, want)
	}
	if in.Launches[0].Context != "0xA" || in.Launches[2].Context != "" {
		t.Fatalf("contexts %q, %q: want the kernel list's", in.Launches[0].Context, in.Launches[2].Context)
	}
}

// TestTraceLess: a trace taken again with only the kernel traces of a
// plan's launches (the ranges of its trace list), and the stats and
// timing of every launch, plans the same, and projects a simulation of
// those launches alone.
func TestTraceLess(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(6000)
	addTrace(t, d, bucket, "full", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket}
	p, err := s.Plan(ctx, plans.Request{TraceID: "full", Target: sampling.Target{Error: 0.05}})
	if err != nil {
		t.Fatal(err)
	}

	// The new trace: every launch's stats, its timing, and a kernel trace
	// for each launch of a range alone.
	addTrace(t, d, bucket, "less", ks, rows)
	traced := map[int]bool{}
	for _, r := range sampling.Ranges(p) {
		for i := r.FirstLaunch; i <= r.LastLaunch; i++ {
			traced[i] = true
			k := ks[i]
			name := filepath.Join(bucket, "less", "traces", fmt.Sprintf("kernel-%d-ctx_%s.trace", k.KernelID, *k.Context))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte("-kernel name = "+k.Name+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(traced) != p.SimulatedLaunches || len(traced)*4 > len(ks) {
		t.Fatalf("%d launches traced of %d, the plan simulates %d", len(traced), len(ks), p.SimulatedLaunches)
	}
	q, err := s.Plan(ctx, plans.Request{TraceID: "less", Target: sampling.Target{Error: 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	strip := func(p cascade.SamplingPlan) cascade.SamplingPlan {
		p.ID, p.TraceID, p.Seq, p.CreatedAt = "", "", 0, time.Time{}
		return p
	}
	if !reflect.DeepEqual(strip(p), strip(q)) {
		t.Fatal("the trace taken again plans otherwise")
	}

	// Simulate the traced launches only (cycles 1.4 per measured ns), and
	// project the whole from the stored plan.
	tr, err := d.Trace(ctx, "less")
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Input(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := d.SamplingPlan(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Strata, err = d.SamplingStrata(ctx, q.ID); err != nil {
		t.Fatal(err)
	}
	sim := map[int]sampling.Simulated{}
	truth := 0.0
	for i, l := range in.Launches {
		y := 1.4 * l.DurationNs
		if !l.Timed() {
			y = 1.4 * float64(l.WarpInstructions) / 10
		}
		truth += y
		if traced[i] {
			sim[i] = sampling.Simulated{Cycles: y}
		}
	}
	pr, err := sampling.Project(stored, in, sim)
	if err != nil {
		t.Fatal(err)
	}
	if !(pr.Low <= truth && truth <= pr.High) || math.Abs(pr.Total-truth) > 0.05*truth {
		t.Fatalf("projected %g in [%g, %g], simulated total %g", pr.Total, pr.Low, pr.High, truth)
	}
}

// TestEvaluate: a plan evaluated against a stored full run projects the
// representatives' cycles onto every launch; a run that is not a
// SUCCEEDED full run of the plan's trace is refused, naming why.
func TestEvaluate(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(900)
	addTrace(t, d, bucket, "timed", ks, rows)
	addTrace(t, d, bucket, "other", ks[:10], nil)
	s := &plans.Service{Store: d, BucketDir: bucket, Runs: d}
	p, err := s.Plan(ctx, plans.Request{TraceID: "timed"})
	if err != nil {
		t.Fatal(err)
	}
	// Cycles: 3 a warp instruction, so a plan projects them closely.
	full := cascade.Run{ID: "r-full", TraceID: "timed", SimConfig: "SM7_QV100", State: cascade.RunSucceeded}
	if err := d.CreateRun(ctx, &full); err != nil {
		t.Fatal(err)
	}
	var rks []cascade.RunKernel
	total := 0.0
	for i, k := range ks {
		c := 3 * *k.Instructions
		total += float64(c)
		rks = append(rks, cascade.RunKernel{Seq: i, KernelID: cascade.Ptr(k.KernelID), Context: k.Context, Name: k.Name, TraceFile: k.TraceFile, SimCycles: c})
	}
	if err := d.SaveRunKernels(ctx, full.ID, rks); err != nil {
		t.Fatal(err)
	}
	e, err := s.Evaluate(ctx, p.ID, full.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.RunID != full.ID || e.Full != total || math.Abs(e.Error) > 0.05 || !(e.Low <= e.Projected && e.Projected <= e.High) {
		t.Fatalf("evaluation %+v against a total of %g", e, total)
	}
	for _, tt := range []struct {
		run  cascade.Run
		want string
	}{
		{cascade.Run{ID: "r-other", TraceID: "other", SimConfig: "SM7_QV100", State: cascade.RunSucceeded}, "a run of trace other"},
		{cascade.Run{ID: "r-running", TraceID: "timed", SimConfig: "SM7_QV100", State: cascade.RunRunning}, "is RUNNING"},
		{cascade.Run{ID: "r-some", TraceID: "timed", SimConfig: "SM7_QV100", State: cascade.RunSucceeded, KernelIDs: []int{1, 2}}, "a run of some kernels"},
		{cascade.Run{ID: "r-empty", TraceID: "timed", SimConfig: "SM7_QV100", State: cascade.RunSucceeded}, "has 0 of the trace's 900 launches"},
	} {
		if err := d.CreateRun(ctx, &tt.run); err != nil {
			t.Fatal(err)
		}
		_, err := s.Evaluate(ctx, p.ID, tt.run.ID)
		if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want BAD_USER_INPUT saying %q", tt.run.ID, err, tt.want)
		}
	}
	if _, err := s.Evaluate(ctx, p.ID, "r-none"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
		t.Errorf("an unknown run: %v", err)
	}
}

// TestPlanTraceErrors: planSampling's errors about its trace name
// traceId with launchRun's codes: NOT_FOUND for a trace that is not
// there, CONFLICT for one that is not READY (they were BAD_USER_INPUT and
// a bare "trace … not found").
func TestPlanTraceErrors(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	if err := d.SaveTrace(ctx, &cascade.Trace{ID: "llm2", State: cascade.TraceUploading, Prompts: []string{}}); err != nil {
		t.Fatal(err)
	}
	s := &plans.Service{Store: d, BucketDir: bucket}
	for _, c := range []struct {
		id     string
		code   string
		prefix string
	}{
		{"nope", cascade.ENOTFOUND, `traceId: trace "nope" not found`},
		{"llm2", cascade.ECONFLICT, `traceId: trace "llm2" is uploading`},
	} {
		_, err := s.Plan(ctx, plans.Request{TraceID: c.id})
		if cascade.ErrorCode(err) != c.code || err == nil || !strings.HasPrefix(cascade.ErrorMessage(err), c.prefix) {
			t.Errorf("Plan(%s) = %v (%s), want %s %q…", c.id, err, cascade.ErrorCode(err), c.code, c.prefix)
		}
	}
}
