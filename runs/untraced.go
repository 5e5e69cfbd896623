package runs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// untracedLaunches is what a trace with untraced launches
// (cascade.Kernel.Untraced) holds: the kernel ids of its launches (its
// stats rows), and by kernel id its launches kernelslist.g names no
// kernel trace of, each with its CUDA context. Kernel ids repeat across
// contexts, so one id may be traced in one context and not in another.
type untracedLaunches struct {
	launches map[int]bool
	untraced map[int][]kernellist.Ref
}

// readUntraced reads the trace's stats files and kernelslist.g, matching
// launches to kernel traces by kernel id and context as post-processing
// marks them (tracedir.Traced).
func (m *Manager) readUntraced(traceID string) (untracedLaunches, error) {
	dir := m.traceDir(traceID)
	traced, err := tracedir.ReadTraced(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return untracedLaunches{}, fmt.Errorf("read kernel list of %s: %w", traceID, err)
	}
	tree, err := tracedir.StatsTree(dir)
	if err != nil {
		return untracedLaunches{}, fmt.Errorf("read stats of %s: %w", traceID, err)
	}
	u := untracedLaunches{launches: map[int]bool{}, untraced: map[int][]kernellist.Ref{}}
	var w tracedir.Warnings
	err = tree.EachKernels(&w, 2000, func(b []cascade.Kernel) error {
		for i := range b {
			k := &b[i]
			u.launches[k.KernelID] = true
			if traced.Mark(k) {
				u.untraced[k.KernelID] = append(u.untraced[k.KernelID], kernellist.Ref{ID: k.KernelID, Context: cascade.Deref(k.Context)})
			}
		}
		return nil
	})
	if err != nil {
		return untracedLaunches{}, fmt.Errorf("read stats of %s: %w", traceID, err)
	}
	return u, nil
}

// untracedKernels checks the kernelIds of a launch on trace t, which has
// untraced launches: a run of kernel ids simulates every context's launch
// of them, so each must have a kernel trace. It returns the error naming
// the untraced ones ("4, 9@0x7f00aa"), else err, checkKernels' (nil when
// every id is in kernelslist.g), which also stands when an id is no
// launch of the trace at all. b keeps what it read for the batch.
func (m *Manager) untracedKernels(t cascade.Trace, ids []int, b *batch, err error) error {
	u, ok := b.untraced[t.ID]
	if !ok {
		var rerr error
		if u, rerr = m.readUntraced(t.ID); rerr != nil {
			if err != nil {
				return err
			}
			return rerr
		}
		b.untraced = setIn(b.untraced, t.ID, u)
	}
	var named []string
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if !u.launches[id] {
			if err != nil {
				return err // no launch at all: checkKernels says so
			}
			continue
		}
		for _, r := range u.untraced[id] {
			named = append(named, r.String())
		}
	}
	if len(named) == 0 {
		return err
	}
	return cascade.Errorf(cascade.EINVALID, "kernelIds: %s: trace %q has no kernel trace of them (launches the tracer counted outside its DYNAMIC_KERNEL_LIMIT ranges: Kernel.traced is false; "+
		"a run of kernel ids simulates each CUDA context's launch of them); upload their kernel traces, or simulate traced kernels only", strings.Join(named, ", "), t.ID)
}
