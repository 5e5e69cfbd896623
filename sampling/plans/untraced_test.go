package plans_test

import (
	"context"
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

// key is a launch as the tracer names it: kernel id and CUDA context.
type key struct {
	id  int
	ctx string
}

// traceLess stores trace id as one taken with p's traceList: ks with
// every launch outside p's ranges untraced, as post-processing marks
// them (by kernel id and context), and returns the traced launches.
func traceLess(t *testing.T, d *db.DB, bucket, id string, p cascade.SamplingPlan, ks []cascade.Kernel, rows []timingRow) map[key]bool {
	t.Helper()
	traced := map[key]bool{}
	for _, rg := range sampling.Ranges(p) {
		for i := range ks {
			if c := cascade.Deref(ks[i].Context); c == cascade.Deref(rg.Context) && ks[i].KernelID >= rg.Start && ks[i].KernelID <= rg.End {
				traced[key{ks[i].KernelID, c}] = true
			}
		}
	}
	less := make([]cascade.Kernel, len(ks))
	untraced := 0
	for i, k := range ks {
		k.Untraced = !traced[key{k.KernelID, cascade.Deref(k.Context)}]
		if k.Untraced {
			untraced++
		}
		less[i] = k
	}
	addTrace(t, d, bucket, id, less, rows)
	ctx := context.Background()
	tr, err := d.Trace(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tr.KernelCount, tr.UntracedKernels = len(ks)-untraced, untraced
	if err := d.SaveTrace(ctx, &tr); err != nil {
		t.Fatal(err)
	}
	return traced
}

// TestPlanUntraced: a two-context trace whose contexts repeat kernel ids
// (llm), taken again with only the kernel traces of a plan's traceList
// (every other launch untraced, by id and context), through the SQLite
// store. Planned with the settings it was traced with, the plan
// simulates traced launches only and says nothing, although some of its
// kernel ids are untraced in the other context (compared by id alone, it
// would warn). Planned with another target, it names what it would
// simulate untraced, by position, id and context, when made and when
// read back, and says so in its note.
func TestPlanUntraced(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	// 20,000 launches, as an LLM trace of a few requests; 4,000 in the
	// fast tier, where storing two such traces was most of its time.
	n := 20000
	if testing.Short() {
		n = 4000
	}
	ks, rows := llm(n)
	addTrace(t, d, bucket, "full", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket}
	own := plans.Request{TraceID: "full", Target: sampling.Target{Error: 0.05}, Warmup: cascade.Ptr(2)}
	fp, err := s.Plan(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	if fp.Untraced != nil {
		t.Fatalf("a plan of a trace traced whole: %+v", fp.Untraced)
	}
	traced := traceLess(t, d, bucket, "less", fp, ks, rows)

	// Its own settings: the same plan, and nothing to say.
	own.TraceID = "less"
	lp, err := s.Plan(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	if lp.Untraced != nil || !reflect.DeepEqual(sampling.Ranges(lp), sampling.Ranges(fp)) {
		t.Fatalf("planned as traced: untraced %+v, ranges %v (traced %v)", lp.Untraced, sampling.Ranges(lp), sampling.Ranges(fp))
	}
	stored, err := s.SamplingPlan(ctx, lp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.Untraced(ctx, stored); u != nil || err != nil {
		t.Fatalf("read back: %+v, %v", u, err)
	}
	otherCtx := 0 // kernel ids the plan simulates that the other context has untraced
	for _, rg := range sampling.Ranges(lp) {
		for id := rg.Start; id <= rg.End; id++ {
			for c := range map[string]bool{"0x6165BDD7EC90": true, "0x7f00aa": true} {
				if c != cascade.Deref(rg.Context) && !traced[key{id, c}] {
					otherCtx++
				}
			}
		}
	}
	if otherCtx == 0 {
		t.Fatal("no kernel id of the plan is untraced in the other context: the test shows nothing")
	}

	// Another target: the launches it would simulate untraced, named.
	wide, err := s.Plan(ctx, plans.Request{TraceID: "less", Target: sampling.Target{Error: 0.005}, Warmup: cascade.Ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	var want []cascade.UntracedLaunch
	var wantRanges []cascade.KernelRange
	ranges := sampling.Ranges(wide)
	for _, rg := range ranges {
		in := false
		for i := rg.FirstLaunch; i <= rg.LastLaunch; i++ {
			k := ks[i]
			if c := cascade.Deref(k.Context); c == cascade.Deref(rg.Context) && k.KernelID >= rg.Start && k.KernelID <= rg.End && !traced[key{k.KernelID, c}] {
				want = append(want, cascade.UntracedLaunch{Launch: i, KernelID: k.KernelID, Context: rg.Context})
				if !in {
					wantRanges, in = append(wantRanges, rg), true
				}
			}
		}
	}
	u := wide.Untraced
	if len(want) == 0 || u == nil || u.Count != len(want) || !reflect.DeepEqual(u.Launches, want[:min(len(want), cascade.MaxUntracedListed)]) || !reflect.DeepEqual(u.Ranges, wantRanges) {
		t.Fatalf("another target: %d untraced launches in %d of %d ranges; the plan says %+v", len(want), len(wantRanges), len(ranges), u)
	}
	first := want[0].String()
	if !strings.Contains(first, "@0x") || !strings.Contains(u.Note, "trace \"less\" has no kernel trace of (kernel ids "+first+", ") ||
		!strings.Contains(u.Note, "A sampled run of this plan is refused") {
		t.Fatalf("note %q: want it to name %s", u.Note, first)
	}
	stored, err = s.SamplingPlan(ctx, wide.ID)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	back, err := s.Untraced(ctx, stored)
	took := time.Since(start)
	if err != nil || !reflect.DeepEqual(back, u) {
		t.Fatalf("read back: %+v, %v; when made %+v", back, err, u)
	}
	t.Logf("%d launches in two contexts, %d traced: the plan of another target simulates %d untraced launches in %d of its %d ranges; read back in %v",
		len(ks), len(traced), u.Count, len(u.Ranges), len(ranges), took)
}
