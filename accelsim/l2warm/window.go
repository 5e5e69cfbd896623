package l2warm

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// The window of a segment is the launches whose lines its warming draws
// on: walking back from its first kernel over the kernel list, until the
// distinct lines they touched exceed the capacity asked for. A trace
// taken with a sampling plan's traceList holds the kernel traces of some
// launches only, and its kernel list names only those; a window that
// walked over the gaps would draw on older launches than the whole
// trace's and warm other lines. So the walk stops at a gap, and Window
// names the launches a window reads on the whole trace: traced too, they
// make the segment's warming the same on both traces.

// Gap is where a window met launches the trace has no kernel trace of:
// Before is traced, the kernel of its context just before it (its id
// less one) is not.
type Gap struct {
	Before kernellist.Ref
}

func (g Gap) String() string {
	ctx := ""
	if g.Before.Context != "" {
		ctx = " of context " + g.Before.Context
	}
	return fmt.Sprintf("kernel %d%s has no kernel trace", g.Before.ID-1, ctx)
}

// walkBack walks src's kernels back from the one at index first (of
// src.Kernels()), handing each earlier kernel's footprint to visit, until
// their distinct lines exceed capacity bytes (the kernel that crosses it
// is the window's last), the list begins, or a gap. In each context the
// kernel ids of a list count up by one, so a kernel whose id is not one
// less than the next one of its context walked over is a gap; and so is,
// when the walk ends, a context walked over whose kernel before the last
// one walked over is in no place in the list (launches of another
// context came between, or the list began), unless the capacity ended
// the walk at that kernel (the one before it lies beyond the window).
// A window that ends before its trace's gap is whole. It returns how
// many kernels it visited and the gap it stopped at, if any.
func walkBack(c *Cache, src *kernellist.List, first int, capacity uint64, visit func(Print)) (int, *Gap, error) {
	ks := src.Kernels()
	next := map[string]int{} // by context: the id of the kernel walked over last
	if k := ks[first]; k.KernelOK {
		next[k.Kernel.Context] = k.Kernel.ID
	}
	var window Lines
	n := 0
	for i := first - 1; i >= 0 && window.Bytes() <= capacity; i-- {
		k := ks[i]
		if k.KernelOK {
			if id, ok := next[k.Kernel.Context]; ok && k.Kernel.ID != id-1 {
				return n, &Gap{Before: kernellist.Ref{ID: id, Context: k.Kernel.Context}}, nil
			}
			next[k.Kernel.Context] = k.Kernel.ID
		}
		fp, err := c.Footprint(src.TracePath(k))
		if err != nil {
			return n, nil, err
		}
		n++
		window = Union(window, fp.Touched)
		visit(fp)
	}
	// Stopped by the capacity, the context of the window's last kernel
	// is whole: its kernel before that one lies beyond the window.
	exempt, capped := "", window.Bytes() > capacity
	if k := ks[first-n]; capped && k.KernelOK {
		exempt = k.Kernel.Context
	}
	present := map[kernellist.Ref]bool{}
	for _, k := range ks[:first] {
		if k.KernelOK {
			if id, ok := next[k.Kernel.Context]; ok && k.Kernel.ID == id-1 {
				present[k.Kernel] = true
			}
		}
	}
	for _, ctx := range slices.Sorted(maps.Keys(next)) {
		if id := next[ctx]; id > 1 && !(capped && ctx == exempt) && !present[kernellist.Ref{ID: id - 1, Context: ctx}] {
			return n, &Gap{Before: kernellist.Ref{ID: id, Context: ctx}}, nil
		}
	}
	return n, nil, nil
}

// Window returns the kernels of src whose lines the warming of a segment
// starting at kernel start reads at capacity bytes (Plan's window), the
// latest first, and the gap it stopped at when src lacks some of them;
// none when src lacks start itself.
func Window(c *Cache, src *kernellist.List, start kernellist.Ref, capacity uint64) ([]kernellist.Ref, *Gap, error) {
	ks := src.Kernels()
	first := slices.IndexFunc(ks, func(k kernellist.Command) bool {
		return k.KernelOK && chosenRef([]kernellist.Ref{start}, k.Kernel)
	})
	if first < 0 {
		return nil, nil, nil // untraced: no segment of this trace starts there
	}
	var refs []kernellist.Ref
	i := first
	_, gap, err := walkBack(c, src, first, capacity, func(Print) {
		// walkBack visits every kernel before first, in turn; one named
		// otherwise than kernel-N… cannot be traced by id.
		i--
		if ks[i].KernelOK {
			refs = append(refs, ks[i].Kernel)
		}
	})
	return refs, gap, err
}
