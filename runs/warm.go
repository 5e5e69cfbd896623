package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
)

// segmentWarmer gives a segment of a sampled or split run a warming
// kernel before its first kernel (package l2warm): the lines its kernels
// touch that the launches shortly before it touched too, loaded into the
// simulated L2 where the full simulation would find them. Footprints are
// kept under the work directory (never the trace's), across segments and
// restarts.
type segmentWarmer struct {
	cache *l2warm.Cache
}

func newSegmentWarmer(workDir string) *segmentWarmer {
	dir := ""
	if workDir != "" {
		dir = filepath.Join(workDir, "l2warm")
	}
	return &segmentWarmer{cache: l2warm.NewCache(dir)}
}

// warm puts the warming kernel into the segment's directory, before the
// first kernel of sub (the list written for it from src, of the kernels
// refs), and returns the list as rewritten (sub when nothing is warmed)
// and what to record in the run's history ("" for nothing: a run that is
// no segment, a segment starting at the first launch). Warming that
// cannot be done is recorded, never fatal: the segment runs cold, as it
// would have.
//
// prep says how many of the segment's first kernels only warm up the
// rest (the lines they touch are theirs to bring in) and whose segment it
// is (segmentPrepOf).
func (w *segmentWarmer) warm(r cascade.Run, cfg cascade.SimConfig, src, sub *kernellist.List, refs []kernellist.Ref, prep segmentPrep) (*kernellist.List, string) {
	if r.SampledByID == nil || len(refs) == 0 {
		return sub, ""
	}
	l2, err := l2warm.L2(cfg)
	if err != nil {
		return sub, NotWarmed + err.Error()
	}
	if l2.Flushed {
		return sub, "" // the simulator empties L2 between kernels: a segment starts as the full run's kernels do
	}
	plan, err := l2warm.PlanAfterWarmup(w.cache, src, refs, prep.warmup, l2.Window(prep.windowShare()))
	if err != nil {
		return sub, NotWarmed + err.Error()
	}
	if len(plan.Lines) == 0 {
		return sub, ""
	}
	ks := sub.Kernels()
	name, err := l2warm.WriteKernel(sub.Dir(), plan, sub.TracePath(ks[0]))
	if err != nil {
		return sub, NotWarmed + err.Error()
	}
	out, err := kernellist.PutFirst(sub, name)
	if err != nil {
		return sub, NotWarmed + err.Error()
	}
	return out, fmt.Sprintf("L2 warmed: %d lines (%d KB, %d of them written) from %d earlier launches, by a kernel %s run first and left out of the results",
		plan.Lines.Count(), plan.Lines.Bytes()>>10, plan.Dirty.Count(), plan.Launches, name)
}

// segmentPrep is how a segment of a sampled or split run is warmed.
type segmentPrep struct {
	// warmup is how many of its first kernels its coordinator simulates
	// only to warm up the rest: a split run's warm-up, a sampled run's
	// launches before the segment's first representative. 0 when its
	// parent does not say (a sampled run stored before it kept them):
	// then every line is warmed, as before.
	warmup int
	// sampled: a sampled run's segment, not a split run's (or one whose
	// parent does not say).
	sampled bool
}

// windowShare is the warming window's share of the L2: a sampled run's
// segments take l2warm.SampledWindowShare, the others l2warm.WindowShare.
func (p segmentPrep) windowShare() float64 {
	if p.sampled {
		return l2warm.SampledWindowShare
	}
	return l2warm.WindowShare
}

// segmentPrepOf is the preparation of parent's segment id.
func segmentPrepOf(parent cascade.Run, id string) segmentPrep {
	if s := parent.Split; s != nil {
		if i := slices.Index(s.SegmentIDs, id); i >= 0 && i < len(s.SegmentStarts) {
			return segmentPrep{warmup: min(s.Warmup, s.SegmentStarts[i])}
		}
	}
	if s := parent.Sampling; s != nil {
		p := segmentPrep{sampled: true}
		if i := slices.Index(s.SegmentIDs, id); i >= 0 && i < len(s.SegmentWarmups) {
			p.warmup = s.SegmentWarmups[i]
		}
		return p
	}
	return segmentPrep{}
}

// NotWarmed begins the history line of a segment whose L2 could not be
// warmed (it ran cold); a sampled run of such a segment states the
// warm-up allowance of cold segments (sampling.Cold).
const NotWarmed = "L2 not warmed: "

// warmVersion names how segments are prepared; a change to what is warmed
// changes it, so a segment prepared otherwise is not reused for one now.
const warmVersion = "l2warm 3"

// segment is the sums a segment of a sampled or split run records: its
// config sum covers its preparation too (the warming kernel, which the
// config's L2 and the kernels before the segment decide), so a segment
// reuses only a segment prepared the same way, never a run of the same
// kernels without warming, nor a segment from before warming, and is
// never reused for either.
func (s Sums) segment() Sums {
	if s.Config != "" {
		h := sha256.Sum256([]byte(s.Config + "\x00" + warmVersion))
		s.Config = hex.EncodeToString(h[:])
	}
	return s
}
