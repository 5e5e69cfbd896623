package postproc

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/tracedir"
)

// kernelsPerRead is how many stored kernels a read of the profiles asks
// the store for at once.
const kernelsPerRead = 5000

// ReadProfiles queues a ready trace's hardware profiles to be read again:
// a profile metadata.json names was added, changed or removed, or
// metadata.json changed its profiles alone (the scanner tells, through
// the trace's state machine: tracestate.ProfilesChanged). Queuing it
// while it waits is a no-op. The trace stays READY: see reprofile.
func (p *Processor) ReadProfiles(id string) { p.profiles.Add(id) }

// reprofile reads a ready trace's profiles again, as finish reads them
// when it becomes ready, matched to its stored kernel list (the
// post-processor does not run): its counters are replaced, its profiles
// and the profiles' warnings (its other warnings stay) are updated, and
// the trace is published. It never moves the trace's state. A trace that
// is no longer ready is left alone: the post-processor reads its profiles
// when it is ready again.
func (p *Processor) reprofile(_ context.Context, id string) {
	ctx := p.ctx
	cur, err := p.cfg.Store.Trace(ctx, id)
	if err != nil || cur.State != cascade.TraceReady {
		return
	}
	dir := filepath.Join(p.cfg.Root, id)
	meta, err := tracedir.ReadMetadata(dir)
	if err != nil {
		return // the scanner sees it too, and starts the trace over
	}
	var traced []hwprofile.Traced
	if len(meta.Profiles) > 0 {
		for from := 0; ; from += kernelsPerRead {
			ks, err := p.cfg.Store.KernelRange(ctx, id, from, from+kernelsPerRead)
			if err != nil {
				if ctx.Err() == nil {
					p.log.Error("read kernels for profiles", "trace", id, "err", err)
				}
				return
			}
			traced = appendTraced(traced, ks)
			if len(ks) < kernelsPerRead {
				break
			}
		}
	}
	counters, profiles, pw := readProfiles(dir, meta.Profiles, traced, p.cfg.CounterMap)
	if err := p.cfg.Store.ReplaceKernelCounters(ctx, id, counters); err != nil {
		if ctx.Err() == nil {
			p.log.Error("save kernel counters", "trace", id, "err", err)
		}
		return
	}
	again := false
	t, saved, err := p.cfg.Store.UpdateTrace(ctx, id, func(t *cascade.Trace, found bool) error {
		if !found || t.State != cascade.TraceReady {
			return cascade.ErrUnchanged
		}
		if t.UploadSum != cur.UploadSum || t.KernelCount != cur.KernelCount {
			// Uploaded again and ready again meanwhile: the counters
			// just stored were matched to the earlier kernels.
			again = true
			return cascade.ErrUnchanged
		}
		ws := slices.DeleteFunc(slices.Clone(t.Warnings), profileWarning)
		t.Warnings = append(ws, pw...)
		if t.Warnings == nil {
			t.Warnings = []string{}
		}
		t.Profiles = profiles
		return nil
	})
	switch {
	case err != nil:
		p.log.Error("save trace", "trace", id, "err", err)
	case again:
		p.profiles.Add(id)
	case saved:
		p.log.Info("profiles read again", "trace", id, "profiles", len(profiles), "counters", len(counters))
		p.cfg.Events.Publish(cascade.TraceUpdated{Trace: t})
	}
}
