package db_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestSampledRunRows: a sampled run and its segments are stored together
// in order; its sampling figures and its kernels' simulated and
// projectedFrom read back as written; runs listings leave segments out
// unless asked, and Segments lists a sampled run's in order.
func TestSampledRunRows(t *testing.T) {
	dbtest.ForEachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		parentID := "rp"
		total := 1234.5
		parent := cascade.Run{ID: parentID, TraceID: "t", SimConfig: "c", State: cascade.RunQueued, Executor: "local", History: []string{},
			Sampling: &cascade.SampledRun{PlanID: "sp1", SegmentIDs: []string{"s1", "s2"}, SegmentRepresentatives: []int{2, 1},
				SegmentInstructions: []int64{10, 20}, Representatives: 3, ProjectedCycles: &total}}
		seg := func(id string, ids ...int) cascade.Run {
			return cascade.Run{ID: id, TraceID: "t", SimConfig: "c", State: cascade.RunQueued, Executor: "local", History: []string{},
				KernelIDs: ids, SampledByID: &parentID}
		}
		plain := cascade.Run{ID: "r0", TraceID: "t", SimConfig: "c", State: cascade.RunQueued, Executor: "local", History: []string{}}
		if err := d.CreateRun(ctx, &plain); err != nil {
			t.Fatal(err)
		}
		rs := []cascade.Run{parent, seg("s1", 1, 2), seg("s2", 7)}
		if err := d.CreateRuns(ctx, rs); err != nil {
			t.Fatal(err)
		}
		if rs[0].Seq != plain.Seq+1 || rs[2].Seq != plain.Seq+3 {
			t.Errorf("seqs %d, %d after %d", rs[0].Seq, rs[2].Seq, plain.Seq)
		}
		got, err := d.Run(ctx, parentID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Sampling, parent.Sampling) || got.SampledByID != nil {
			t.Errorf("sampled run read back: %+v", got.Sampling)
		}
		if p, err := d.Run(ctx, "r0"); err != nil || p.Sampling != nil || p.SampledByID != nil {
			t.Errorf("plain run: %+v, %v", p, err)
		}
		segs, err := d.Segments(ctx, parentID)
		if err != nil || len(segs) != 2 || segs[0].ID != "s1" || segs[1].ID != "s2" || *segs[1].SampledByID != parentID {
			t.Errorf("segments %+v, %v", segs, err)
		}
		for _, c := range []struct {
			f    cascade.RunFilter
			want int
		}{{cascade.RunFilter{}, 2}, {cascade.RunFilter{Segments: true}, 4}, {cascade.RunFilter{TraceID: "t"}, 2}} {
			page, err := d.Runs(ctx, c.f, cascade.Page{First: 10})
			if err != nil || len(page.Items) != c.want {
				t.Errorf("runs %+v: %d, %v; want %d", c.f, len(page.Items), err, c.want)
			}
		}
		yes, no, from := true, false, 0
		ks := []cascade.RunKernel{{Name: "a", Simulated: &yes}, {Name: "b", Simulated: &no, ProjectedFrom: &from}, {Name: "c"}}
		if err := d.SaveRunKernels(ctx, parentID, ks); err != nil {
			t.Fatal(err)
		}
		back, err := d.RunKernels(ctx, parentID)
		if err != nil || len(back) != 3 || back[0].Simulated == nil || !*back[0].Simulated || back[0].ProjectedFrom != nil ||
			back[1].Simulated == nil || *back[1].Simulated || back[1].ProjectedFrom == nil || *back[1].ProjectedFrom != 0 ||
			back[2].Simulated != nil || back[2].ProjectedFrom != nil {
			t.Errorf("kernels %+v, %v", back, err)
		}
	})
}
