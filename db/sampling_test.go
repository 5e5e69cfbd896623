package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/sampling"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// samplePlan plans a synthetic trace of two contexts, some launches
// without a measured duration, with STEM and a warm-up of 2.
func samplePlan(t *testing.T) cascade.SamplingPlan {
	t.Helper()
	var in sampling.Input
	for i := range 3000 {
		l := sampling.Launch{KernelID: i%1500 + 1, Context: "0xa", Name: fmt.Sprintf("k%d", i%7),
			Grid: cascade.Dim3{X: 8 << (i % 3), Y: 1, Z: 1}, Block: cascade.Dim3{X: 128, Y: 1, Z: 1},
			WarpInstructions: int64(1000 + i%5), DurationNs: float64(1000 + (i*7919)%500)}
		if i >= 1500 {
			l.Context = "0xb"
		}
		if i%97 == 0 {
			l.DurationNs = 0
		}
		in.Launches = append(in.Launches, l)
	}
	p, err := sampling.STEM{Warmup: 2}.Plan(in, sampling.Target{Error: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Strata) < 10 || p.UntimedLaunches == 0 {
		t.Fatalf("a plan of %d strata, %d untimed launches: not much of a test", len(p.Strata), p.UntimedLaunches)
	}
	return p
}

// TestSamplingPlanRoundTrip: a stored plan reads back as it was, its
// strata with every member, representative and warm-up; plans list
// newest first; an unknown id is NOT_FOUND, and so is a plan of an
// unknown trace.
func TestSamplingPlanRoundTrip(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		for _, id := range []string{"t1", "t2"} {
			if err := d.SaveTrace(ctx, &cascade.Trace{ID: id, State: cascade.TraceReady, Prompts: []string{}}); err != nil {
				t.Fatal(err)
			}
		}
		want := samplePlan(t)
		want.ID, want.TraceID = "sp1", "t1"
		stored := want
		if err := d.CreateSamplingPlan(ctx, &stored); err != nil {
			t.Fatal(err)
		}
		if stored.Seq == 0 || stored.CreatedAt.IsZero() {
			t.Fatalf("seq %d, created %v: not assigned", stored.Seq, stored.CreatedAt)
		}
		second := cascade.SamplingPlan{ID: "sp2", TraceID: "t1", Method: cascade.SamplingSieve, Basis: cascade.BasisInstructions, Strata: []cascade.SamplingStratum{}}
		if err := d.CreateSamplingPlan(ctx, &second); err != nil {
			t.Fatal(err)
		}

		got, err := d.SamplingPlan(ctx, "sp1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(stored.CreatedAt) {
			t.Fatalf("created %v, stored %v", got.CreatedAt, stored.CreatedAt)
		}
		got.CreatedAt = stored.CreatedAt
		row := stored
		row.Strata = nil
		if !reflect.DeepEqual(got, row) {
			t.Fatalf("read back\n%+v\nstored\n%+v", got, row)
		}
		strata, err := d.SamplingStrata(ctx, "sp1")
		if err != nil {
			t.Fatal(err)
		}
		if len(strata) != len(want.Strata) {
			t.Fatalf("%d strata, stored %d", len(strata), len(want.Strata))
		}
		for i := range strata {
			w := want.Strata[i]
			for k := range w.Representatives {
				if w.Representatives[k].Warmup == nil {
					w.Representatives[k].Warmup = []cascade.SamplingLaunch{}
				}
			}
			if !reflect.DeepEqual(strata[i], w) {
				t.Fatalf("stratum %d read back\n%+v\nstored\n%+v", i, strata[i], w)
			}
		}

		list, err := d.SamplingPlans(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != "sp2" || list[1].ID != "sp1" || list[0].Strata != nil {
			t.Fatalf("plans of t1: %+v, want sp2 then sp1, without strata", list)
		}
		if list, err := d.SamplingPlans(ctx, "t2"); err != nil || len(list) != 0 || list == nil {
			t.Fatalf("plans of t2: %v, %v; want an empty list", list, err)
		}

		if _, err := d.SamplingPlan(ctx, "nope"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("unknown plan: %v", err)
		}
		if s, err := d.SamplingStrata(ctx, "nope"); err != nil || len(s) != 0 {
			t.Fatalf("strata of an unknown plan: %v, %v", s, err)
		}
		orphan := cascade.SamplingPlan{ID: "sp3", TraceID: "gone", Method: cascade.SamplingSTEM, Basis: cascade.BasisDuration}
		if err := d.CreateSamplingPlan(ctx, &orphan); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("a plan of an unknown trace: %v", err)
		}
		bad := cascade.SamplingPlan{ID: "sp4", TraceID: "t1", Strata: []cascade.SamplingStratum{{Name: "k", Size: 2, Members: []int32{5, 5}}}}
		if err := d.CreateSamplingPlan(ctx, &bad); err == nil {
			t.Fatal("stored members that are not ascending")
		}
		if _, err := d.SamplingPlan(ctx, "sp4"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("a refused plan: %v", err)
		}
	})
}

// TestSamplingPlansFollowTheirTrace: a moved trace keeps its plans, and a
// deleted one takes them, strata and all, with it.
func TestSamplingPlansFollowTheirTrace(t *testing.T) {
	ctx := context.Background()
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		if err := d.SaveTrace(ctx, &cascade.Trace{ID: "a", State: cascade.TraceReady, Prompts: []string{}}); err != nil {
			t.Fatal(err)
		}
		p := samplePlan(t)
		p.ID, p.TraceID = "sp1", "a"
		if err := d.CreateSamplingPlan(ctx, &p); err != nil {
			t.Fatal(err)
		}
		if _, err := d.MoveTrace(ctx, "a", "b", func(*cascade.Trace) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if list, err := d.SamplingPlans(ctx, "b"); err != nil || len(list) != 1 || list[0].TraceID != "b" {
			t.Fatalf("plans of the moved trace: %+v, %v", list, err)
		}
		if err := d.DeleteTrace(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.SamplingPlan(ctx, "sp1"); cascade.ErrorCode(err) != cascade.ENOTFOUND {
			t.Fatalf("the plan of a deleted trace: %v", err)
		}
		if s, err := d.SamplingStrata(ctx, "sp1"); err != nil || len(s) != 0 {
			t.Fatalf("strata of a deleted trace's plan: %d, %v", len(s), err)
		}
	})
}
