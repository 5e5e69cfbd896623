package runs

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// untracedKernels is the error of a launch whose kernelIds name launches
// of a trace that has no kernel trace of them (cascade.Kernel.Untraced):
// it names them all, apart from ids that are no launch of the trace at
// all, as err (checkKernels') does. have holds the traced kernel ids.
func (m *Manager) untracedKernels(t cascade.Trace, ids []int, have map[int]bool, err error) error {
	launches := map[int]bool{}
	tree, terr := tracedir.StatsTree(m.traceDir(t.ID))
	if terr != nil {
		return err
	}
	var w tracedir.Warnings
	if tree.EachKernels(&w, 2000, func(b []cascade.Kernel) error {
		for _, k := range b {
			launches[k.KernelID] = true
		}
		return nil
	}) != nil {
		return err
	}
	var untraced []string
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if !have[id] {
			if !launches[id] {
				return err // no launch at all: checkKernels says so
			}
			untraced = append(untraced, strconv.Itoa(id))
		}
	}
	return cascade.Errorf(cascade.EINVALID, "kernelIds: %s: trace %q has no kernel trace of them (launches the tracer counted outside its DYNAMIC_KERNEL_LIMIT ranges: Kernel.traced is false); "+
		"upload their kernel traces, or simulate traced kernels only", strings.Join(untraced, ", "), t.ID)
}
