package results

import (
	"context"
	"fmt"
	"math"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// checkFullRun is the full run a SUCCEEDED sampled run r is checked
// against: its validation run when that SUCCEEDED, else the newest
// SUCCEEDED full run of its trace and config; nil for none (or when r is
// not a SUCCEEDED sampled run).
func (m *Reader) checkFullRun(ctx context.Context, r cascade.Run) (*cascade.Run, error) {
	if r.Sampling == nil || r.State != cascade.RunSucceeded || r.Sampling.ProjectedCycles == nil {
		return nil, nil
	}
	if id := r.Sampling.ValidationRunID; id != nil {
		v, err := m.cfg.Store.Run(ctx, *id)
		if err == nil && v.State == cascade.RunSucceeded {
			return &v, nil
		}
		if err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			return nil, err
		}
	}
	return NewestFullRun(ctx, m.cfg.Store, r.TraceID, r.SimConfig)
}

// SamplingCheck is sampled run r's projection checked against a full run
// of its trace and config (see checkFullRun): nil when there is none. It
// is computed on read, and kept for both runs' versions.
func (m *Reader) SamplingCheck(ctx context.Context, r cascade.Run) (*cascade.SamplingCheck, error) {
	full, err := m.checkFullRun(ctx, r)
	if err != nil || full == nil {
		return nil, err
	}
	key := fmt.Sprint(r.ID, "@", r.UpdatedAt.UnixNano(), "/", full.ID, "@", full.UpdatedAt.UnixNano())
	if c, ok := m.checks.Get(key); ok {
		return c, nil
	}
	c := &cascade.SamplingCheck{FullRunID: full.ID}
	launches := 0
	var sumAbs float64
	// Both runs' kernels are in launch order: a page of each at a time.
	p := cascade.Page{First: cascade.MaxPageSize}
	for {
		fp, err := m.cfg.Store.RunKernelPage(ctx, full.ID, p)
		if err != nil {
			return nil, err
		}
		sp, err := m.cfg.Store.RunKernelPage(ctx, r.ID, p)
		if err != nil {
			return nil, err
		}
		launches += len(sp.Items)
		for _, fk := range fp.Items {
			c.FullCycles += float64(fk.SimCycles)
		}
		for _, d := range kernelErrors(sp.Items, fp.Items) {
			a := math.Abs(d)
			sumAbs += a
			c.MaxKernelErrorPct = max(c.MaxKernelErrorPct, a)
			c.KernelsCompared++
		}
		if !fp.HasNext && !sp.HasNext || len(fp.Items) == 0 && len(sp.Items) == 0 {
			break
		}
		last := max(lastSeq(fp.Items), lastSeq(sp.Items))
		p.After = cascade.Cursor(int64(last))
	}
	if c.KernelsCompared > 0 {
		c.KernelMAPE = sumAbs / float64(c.KernelsCompared)
	}
	proj := *r.Sampling.ProjectedCycles
	if c.FullCycles > 0 {
		c.TotalErrorPct = 100 * (proj - c.FullCycles) / c.FullCycles
	}
	if r.Sampling.CILowCycles != nil && r.Sampling.CIHighCycles != nil {
		c.InsideInterval = *r.Sampling.CILowCycles <= c.FullCycles && c.FullCycles <= *r.Sampling.CIHighCycles
	}
	if cfgs, err := m.cfg.Configs.SimConfigs(); err == nil {
		if cfg, ok := simconfig.Find(cfgs, r.SimConfig); ok && cfg.LaunchLatencyCycles != nil {
			l := *cfg.LaunchLatencyCycles
			c.LaunchLatencyCycles = &l
			fixed := float64(l) * float64(launches)
			if beyond := c.FullCycles - fixed; beyond > 0 {
				e := 100 * (proj - c.FullCycles) / beyond
				c.BeyondLatencyErrorPct = &e
			}
		}
	}
	if res, err := m.Read(ctx, r); err == nil && res.Comparison != nil {
		v := res.Comparison.MAPE
		c.MeasuredMAPE = &v
	}
	if res, err := m.Read(ctx, *full); err == nil && res.Comparison != nil {
		v := res.Comparison.MAPE
		c.FullMeasuredMAPE = &v
	}
	m.checks.Put(key, c)
	return c, nil
}

// maxCachedChecks bounds the checks kept.
const maxCachedChecks = 64

func lastSeq(ks []cascade.RunKernel) int {
	if len(ks) == 0 {
		return -1
	}
	return ks[len(ks)-1].Seq
}

// kernelErrors matches a sampled run's kernels with a full run's of the
// same launches (same Seq and kernel id) and returns each one's
// 100 * (sampled − full) / full, setting the sampled kernels' FullCycles
// and FullErrorPct; a full kernel of 0 cycles has no error.
func kernelErrors(sampled, full []cascade.RunKernel) []float64 {
	bySeq := make(map[int]*cascade.RunKernel, len(full))
	for i := range full {
		bySeq[full[i].Seq] = &full[i]
	}
	var out []float64
	for i := range sampled {
		k := &sampled[i]
		f, ok := bySeq[k.Seq]
		if !ok || cascade.Deref(f.KernelID) != cascade.Deref(k.KernelID) {
			continue
		}
		fc := f.SimCycles
		k.FullCycles = &fc
		if fc > 0 {
			d := 100 * float64(k.SimCycles-fc) / float64(fc)
			k.FullErrorPct = &d
			out = append(out, d)
		}
	}
	return out
}

// joinFull sets FullCycles and FullErrorPct on ks, kernels of sampled run
// r, from the full run its check is against; nothing without one.
func (m *Reader) joinFull(ctx context.Context, r cascade.Run, ks []cascade.RunKernel) error {
	if r.Sampling == nil || len(ks) == 0 {
		return nil
	}
	full, err := m.checkFullRun(ctx, r)
	if err != nil || full == nil {
		return err
	}
	if len(ks) > cascade.MaxPageSize { // every kernel: Results
		fks, err := m.cfg.Store.RunKernels(ctx, full.ID)
		if err != nil {
			return err
		}
		kernelErrors(ks, fks)
		return nil
	}
	return m.joinFullPages(ctx, full.ID, ks)
}

// joinFullPages sets FullCycles and FullErrorPct on ks, consecutive
// kernels of a sampled run in launch order, from the same launches of full
// run fullID, read a page of at most cascade.MaxPageSize at a time.
func (m *Reader) joinFullPages(ctx context.Context, fullID string, ks []cascade.RunKernel) error {
	for len(ks) > 0 {
		n := min(len(ks), cascade.MaxPageSize)
		p := cascade.Page{First: n}
		if ks[0].Seq > 0 {
			p.After = cascade.Cursor(int64(ks[0].Seq - 1))
		}
		fp, err := m.cfg.Store.RunKernelPage(ctx, fullID, p)
		if err != nil {
			return fmt.Errorf("read full run %s's kernels: %w", fullID, err)
		}
		kernelErrors(ks[:n], fp.Items)
		ks = ks[n:]
	}
	return nil
}

// NewestFullRun is the newest SUCCEEDED run of every kernel of the trace
// under the config that is neither sampled nor a segment; nil for none.
func NewestFullRun(ctx context.Context, s interface {
	TraceRuns(ctx context.Context, traceID string) ([]cascade.Run, error)
}, traceID, config string) (*cascade.Run, error) {
	rs, err := s.TraceRuns(ctx, traceID)
	if err != nil {
		return nil, err
	}
	for i := len(rs) - 1; i >= 0; i-- { // oldest first
		if r := rs[i]; r.IsFull() && r.SimConfig == config && r.State == cascade.RunSucceeded {
			return &r, nil
		}
	}
	return nil, nil
}
