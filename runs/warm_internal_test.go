package runs

import (
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
)

// TestSegmentWarmup: a segment's launches that only warm up the rest are
// its parent's to say: a split run's warm-up (none for the first
// segment, at most the launches before it), a sampled run's launches
// before each segment's first representative, and none for a segment
// its parent does not name or a sampled run stored before it kept them.
// A sampled run's segments are warmed from a window of
// l2warm.SampledWindowShare, a split run's (and any other) from
// l2warm.WindowShare.
func TestSegmentWarmup(t *testing.T) {
	split := cascade.Run{Split: &cascade.SplitRun{SegmentIDs: []string{"a", "b", "c"}, SegmentStarts: []int{0, 4, 150}, Warmup: 6}}
	sampled := cascade.Run{Sampling: &cascade.SampledRun{SegmentIDs: []string{"d", "e"}, SegmentWarmups: []int{0, 14}}}
	old := cascade.Run{Sampling: &cascade.SampledRun{SegmentIDs: []string{"f"}}}
	for _, tc := range []struct {
		parent cascade.Run
		id     string
		want   int
	}{
		{split, "a", 0}, {split, "b", 4}, {split, "c", 6}, {split, "x", 0},
		{sampled, "d", 0}, {sampled, "e", 14}, {old, "f", 0},
	} {
		got := segmentPrepOf(tc.parent, tc.id)
		if got.warmup != tc.want {
			t.Errorf("segment %s: warm-up %d, want %d", tc.id, got.warmup, tc.want)
		}
		share := got.windowShare()
		want := l2warm.WindowShare
		if tc.parent.Sampling != nil {
			want = l2warm.SampledWindowShare
		}
		if share != want {
			t.Errorf("segment %s: window share %v, want %v", tc.id, share, want)
		}
	}
}
