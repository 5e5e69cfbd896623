package plans_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// windows is a WindowReader whose window of a segment is the n launches
// before it in the trace (ks), as the L2 warming walks back over them.
type windows struct {
	ks     []cascade.Kernel
	n      int
	config string // the simConfig asked for
	err    error
}

func (w *windows) WarmWindows(_ context.Context, _, simConfig string, starts []kernellist.Ref) ([][]kernellist.Ref, string, error) {
	w.config = simConfig
	if w.err != nil {
		return nil, "", w.err
	}
	out := make([][]kernellist.Ref, len(starts))
	for i, s := range starts {
		for pos, k := range w.ks {
			if k.KernelID == s.ID && kernellist.NormalizeContext(cascade.Deref(k.Context)) == s.Context {
				// Over the kernel list: traced launches only.
				for j := pos - 1; j >= 0 && len(out[i]) < w.n; j-- {
					if !w.ks[j].Untraced {
						out[i] = append(out[i], kernellist.Ref{ID: w.ks[j].KernelID, Context: kernellist.NormalizeContext(cascade.Deref(w.ks[j].Context))})
					}
				}
			}
		}
	}
	return out, "X (L2 1 KB)", nil
}

// TestTraceRangesWarming: a plan's traceRanges are its segments and the
// launches each one's L2 warming reads, found by kernel id and context
// (ids repeat across the two contexts) and counted as warming; the
// config asked for reaches the reader, and its refusal the caller.
func TestTraceRangesWarming(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(600)
	addTrace(t, d, bucket, "full", ks, rows)
	w := &windows{ks: ks, n: 3}
	s := &plans.Service{Store: d, BucketDir: bucket, Windows: w}
	p, err := s.Plan(ctx, plans.Request{TraceID: "full", Target: sampling.Target{Error: 0.05}, Warmup: cascade.Ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	segs := sampling.Ranges(p)
	got, l2, err := s.TraceRanges(ctx, p, "SM7_QV100")
	if err != nil || l2 != "X (L2 1 KB)" || w.config != "SM7_QV100" {
		t.Fatalf("traceRanges: %v, %q, config %q", err, l2, w.config)
	}
	inSeg, traced := map[int]bool{}, map[int]bool{}
	for _, r := range segs {
		for l := r.FirstLaunch; l <= r.LastLaunch; l++ {
			inSeg[l] = true
		}
	}
	warming := 0
	for _, r := range got {
		warming += r.Warming
		if r.End-r.Start+1 != r.Launches || r.LastLaunch-r.FirstLaunch+1 != r.Launches {
			t.Errorf("range %+v: not one run of consecutive launches", r)
		}
		for l := r.FirstLaunch; l <= r.LastLaunch; l++ {
			traced[l] = true
			if k := ks[l]; cascade.Deref(k.Context) != cascade.Deref(r.Context) || k.KernelID != r.Start+l-r.FirstLaunch {
				t.Errorf("range %+v: launch %d is kernel %d of %s", r, l, k.KernelID, cascade.Deref(k.Context))
			}
		}
	}
	want := 0
	for _, r := range segs {
		for l := max(0, r.FirstLaunch-3); l < r.FirstLaunch; l++ {
			if !traced[l] {
				t.Errorf("launch %d, in the window of the segment from %d, is not traced", l, r.FirstLaunch)
			}
			if !inSeg[l] {
				inSeg[l] = true // counted once when windows overlap
				want++
			}
		}
	}
	if want == 0 || warming != want || len(traced) != len(inSeg) {
		t.Errorf("%d launches traced for warming, want %d; %d traced in all, want %d", warming, want, len(traced), len(inSeg))
	}
	// The reader's refusal (a config that is none) reaches the caller.
	w.err = cascade.Errorf(cascade.EINVALID, "simConfig: no such config")
	if _, _, err := s.TraceRanges(ctx, p, "nope"); cascade.ErrorCode(err) != cascade.EINVALID {
		t.Errorf("a refused config: %v", err)
	}
	// No reader: the segments, and a config is refused as meaningless.
	s.Windows = nil
	if got, _, err := s.TraceRanges(ctx, p, ""); err != nil || len(got) != len(segs) {
		t.Errorf("no reader: %v, %d ranges, want the %d segments", err, len(got), len(segs))
	}
	if _, _, err := s.TraceRanges(ctx, p, "SM7_QV100"); err == nil {
		t.Error("no reader, a config given: no error")
	}
}

// TestTraceRangesTraceLess: on a trace taken trace-less (the plan's
// segments traced, the launches before them not), each segment's window
// takes the launches right before it, untraced ones included, as many as
// the walk over the traced launches took, and the note says so; the walk
// stepped over the untraced launches to older traced ones, which
// traceRanges did not find nearby, and it gave no window and no note.
func TestTraceRangesTraceLess(t *testing.T) {
	ctx := context.Background()
	d := dbtest.DB(t)
	bucket := t.TempDir()
	ks, rows := llm(600)
	addTrace(t, d, bucket, "full", ks, rows)
	s := &plans.Service{Store: d, BucketDir: bucket}
	req := plans.Request{TraceID: "full", Target: sampling.Target{Error: 0.05}, Warmup: cascade.Ptr(1)}
	full, err := s.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	segs := sampling.Ranges(planWithStrata(t, s, full))
	inSeg := map[int]bool{}
	for _, r := range segs {
		for l := r.FirstLaunch; l <= r.LastLaunch; l++ {
			inSeg[l] = true
		}
	}
	less := make([]cascade.Kernel, len(ks))
	copy(less, ks)
	untraced := 0
	for i := range less {
		if !inSeg[i] {
			less[i].Untraced = true
			untraced++
		}
	}
	addTrace(t, d, bucket, "less", less, rows)
	w := &windows{ks: less, n: 3}
	s.Windows = w
	req.TraceID = "less"
	p, err := s.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	p = planWithStrata(t, s, p)
	got, _, err := s.TraceRanges(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	covered, warming := map[int]bool{}, 0
	for _, r := range got {
		warming += r.Warming
		for l := r.FirstLaunch; l <= r.LastLaunch; l++ {
			covered[l] = true
		}
	}
	missing := 0
	for _, r := range sampling.Ranges(p) {
		for l := max(0, r.FirstLaunch-3); l < r.FirstLaunch; l++ {
			if !covered[l] {
				missing++
			}
		}
	}
	if warming == 0 || missing > 0 {
		t.Errorf("%d launches traced for warming, %d of the windows' launches right before segments left out: want the 3 before each segment", warming, missing)
	}
	_, _, note, err := s.TraceRangesNoted(ctx, p, "")
	if err != nil || !strings.Contains(note, "has no kernel trace of") || !strings.Contains(note, "footprints are unknown") {
		t.Errorf("note %q, %v: want it to say the windows take untraced launches", note, err)
	}
	// A trace traced whole has no note.
	if _, _, note, err := s.TraceRangesNoted(ctx, planWithStrata(t, s, full), ""); err != nil || note != "" {
		t.Errorf("traced whole: note %q, %v", note, err)
	}
}
