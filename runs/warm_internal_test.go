package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestSegmentSums: a segment records its config's sum with its
// preparation's version; on a trace traced whole it is the version of
// before windows stopped at untraced launches (so those segments are
// still reused), on one lacking launches another (so a segment warmed
// over the gaps, as before, is not).
func TestSegmentSums(t *testing.T) {
	s := Sums{Config: "abc", Trace: "t"}
	old := sha256.Sum256([]byte("abc\x00l2warm 3"))
	if got := s.segment(false); got.Config != hex.EncodeToString(old[:]) || got.Trace != "t" {
		t.Errorf("whole trace: %+v, want the config sum of l2warm 3", got)
	}
	if a, b := s.segment(false), s.segment(true); a == b {
		t.Errorf("a trace lacking launches records the same sums as one traced whole: %+v", a)
	}
	if got := (Sums{}).segment(true); got.Config != "" {
		t.Errorf("no config sum: %+v, want none", got)
	}
}
