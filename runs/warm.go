package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/tracedir"
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
	short := ""
	if plan.Gap != nil {
		short = fmt.Sprintf("%sthe window stopped after %d earlier launches, short of the L2's worth of lines, where %s: "+
			"the whole trace's warming reads launches this trace lacks (its sampling plan's traceList names them)", WarmedInPart, plan.Launches, plan.Gap)
	}
	if len(plan.Lines) == 0 {
		return sub, short
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
	note := fmt.Sprintf("L2 warmed: %d lines (%d KB, %d of them written) from %d earlier launches, by a kernel %s run first and left out of the results",
		plan.Lines.Count(), plan.Lines.Bytes()>>10, plan.Dirty.Count(), plan.Launches, name)
	if short != "" {
		note = short + "; " + strings.TrimPrefix(note, "L2 warmed: ")
	}
	return out, note
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

// WarmedInPart begins the history line of a segment whose warming window
// met launches its trace has no kernel trace of (l2warm.Gap): it warmed
// what the traced launches touched, less than the whole trace's segment
// would, so a sampled run of it states the cold segments' allowance too.
const WarmedInPart = "L2 warmed in part: "

// warmVersion names how segments are prepared; a change to what is warmed
// changes it, so a segment prepared otherwise is not reused for one now.
// On a trace that lacks launches' kernel traces the window stops at the
// first it lacks since warmVersionLacking; before, it walked over them
// (a trace traced whole warms as it did).
const (
	warmVersion        = "l2warm 3"
	warmVersionLacking = "l2warm 4, windows stop where launches are untraced"
)

// segment is the sums a segment of a sampled or split run records: its
// config sum covers its preparation too (the warming kernel, which the
// config's L2 and the kernels before the segment decide), so a segment
// reuses only a segment prepared the same way, never a run of the same
// kernels without warming, nor a segment from before warming, and is
// never reused for either. lacking: its trace lacks some launches'
// kernel traces (Trace.UntracedKernels).
func (s Sums) segment(lacking bool) Sums {
	v := warmVersion
	if lacking {
		v = warmVersionLacking
	}
	if s.Config != "" {
		h := sha256.Sum256([]byte(s.Config + "\x00" + v))
		s.Config = hex.EncodeToString(h[:])
	}
	return s
}

// lacking reports whether trace id lacks some launches' kernel traces.
func (m *Manager) lacking(ctx context.Context, id string) bool {
	t, err := m.cfg.Store.Trace(ctx, id)
	return err == nil && t.UntracedKernels > 0
}

// WarmWindows returns, for each of starts (the first kernels of a sampled
// run's segments), the kernels of the trace whose lines its L2 warming
// reads (l2warm.Window at l2warm.SampledWindowShare) under simConfig's
// L2, or the largest L2 among the server's configs when simConfig is "",
// and the config it took with its L2's size. None (nil, "") when no
// config keeps lines in L2 between kernels, or the server has none. On a
// trace that lacks some launches' kernel traces a window stops at the
// first it lacks. It reads the kernel traces of the windows' launches
// (their footprints, kept under the work directory as a segment's are).
func (m *Manager) WarmWindows(ctx context.Context, traceID, simConfig string, starts []kernellist.Ref) ([][]kernellist.Ref, string, error) {
	var cfg cascade.SimConfig
	var l2 l2warm.L2Cache
	if simConfig != "" {
		c, err := m.configs.Variant(ctx, simConfig, nil)
		if err != nil {
			return nil, "", err
		}
		if l2, err = l2warm.L2(c); err != nil {
			return nil, "", cascade.Errorf(cascade.EINVALID, "simConfig: %s", err.Error())
		}
		cfg = c
	} else {
		cfgs, err := m.configs.SimConfigs()
		if err != nil {
			return nil, "", err
		}
		for _, c := range cfgs {
			if x, err := l2warm.L2(c); err == nil && !x.Flushed && c.Usable() && x.Bytes > l2.Bytes {
				cfg, l2 = c, x
			}
		}
	}
	if l2.Flushed || l2.Bytes == 0 {
		return nil, "", nil
	}
	list, err := kernellist.Read(filepath.Join(m.traceDir(traceID), filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return nil, "", err
	}
	out, _, err := l2warm.Windows(m.warm.cache, list, starts, l2.Window(l2warm.SampledWindowShare))
	if err != nil {
		return nil, "", fmt.Errorf("trace %s: %w", traceID, err)
	}
	return out, fmt.Sprintf("%s (L2 %d KB)", cfg.Name, l2.Bytes>>10), nil
}
