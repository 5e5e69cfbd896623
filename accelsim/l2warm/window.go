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

// walker walks a kernel list back from a segment's first kernel: the
// list's kernels, where each is, and their footprints as read (a walk
// for each of many segments reads each footprint once).
type walker struct {
	c     *Cache
	src   *kernellist.List
	ks    []kernellist.Command
	at    map[kernellist.Ref]int // index in ks of each kernel named kernel-N…
	memo  []Print
	known []bool
}

func newWalker(c *Cache, src *kernellist.List) *walker {
	ks := src.Kernels()
	w := &walker{c: c, src: src, ks: ks, at: make(map[kernellist.Ref]int, len(ks)), memo: make([]Print, len(ks)), known: make([]bool, len(ks))}
	for i, k := range ks {
		if k.KernelOK {
			w.at[k.Kernel] = i
		}
	}
	return w
}

func (w *walker) footprint(i int) (Print, error) {
	if w.known[i] {
		return w.memo[i], nil
	}
	p, err := w.c.Footprint(w.src.TracePath(w.ks[i]))
	if err != nil {
		return Print{}, err
	}
	w.memo[i], w.known[i] = p, true
	return p, nil
}

// back walks the kernels back from the one at index first, handing each
// earlier kernel's index and footprint to visit, until their distinct
// lines exceed capacity bytes (the kernel that crosses it is the
// window's last), the list begins, or a gap. In each context the kernel
// ids of a list count up by one, so a kernel whose id is not one less
// than the next one of its context walked over is a gap; and so is, when
// the walk ends, a context walked over whose kernel before the last one
// walked over is in no place before it in the list (launches of another
// context came between, or the list began), unless the capacity ended
// the walk at that kernel (the one before it lies beyond the window). A
// window that ends before its trace's gap is whole. It returns how many
// kernels it visited and the gap it stopped at, if any.
func (w *walker) back(first int, capacity uint64, visit func(i int, p Print)) (int, *Gap, error) {
	next := map[string]int{} // by context: the id of the kernel walked over last
	if k := w.ks[first]; k.KernelOK {
		next[k.Kernel.Context] = k.Kernel.ID
	}
	var window Lines
	n := 0
	for i := first - 1; i >= 0 && window.Bytes() <= capacity; i-- {
		k := w.ks[i]
		if k.KernelOK {
			if id, ok := next[k.Kernel.Context]; ok && k.Kernel.ID != id-1 {
				return n, &Gap{Before: kernellist.Ref{ID: id, Context: k.Kernel.Context}}, nil
			}
			next[k.Kernel.Context] = k.Kernel.ID
		}
		fp, err := w.footprint(i)
		if err != nil {
			return n, nil, err
		}
		n++
		window = Union(window, fp.Touched)
		visit(i, fp)
	}
	// Stopped by the capacity, the context of the window's last kernel
	// is whole: its kernel before that one lies beyond the window.
	exempt, capped := "", window.Bytes() > capacity
	if k := w.ks[first-n]; capped && k.KernelOK {
		exempt = k.Kernel.Context
	}
	for _, ctx := range slices.Sorted(maps.Keys(next)) {
		if id := next[ctx]; id > 1 && !(capped && ctx == exempt) {
			if j, ok := w.at[kernellist.Ref{ID: id - 1, Context: ctx}]; !ok || j >= first {
				return n, &Gap{Before: kernellist.Ref{ID: id, Context: ctx}}, nil
			}
		}
	}
	return n, nil, nil
}

// Window returns the kernels of src whose lines the warming of a segment
// starting at kernel start reads at capacity bytes (Plan's window), the
// latest first, and the gap it stopped at when src lacks some of them;
// none when src lacks start itself.
func Window(c *Cache, src *kernellist.List, start kernellist.Ref, capacity uint64) ([]kernellist.Ref, *Gap, error) {
	ws, gaps, err := Windows(c, src, []kernellist.Ref{start}, capacity)
	if err != nil {
		return nil, nil, err
	}
	return ws[0], gaps[0], nil
}

// Windows is Window for each of starts, reading each kernel's footprint
// once.
func Windows(c *Cache, src *kernellist.List, starts []kernellist.Ref, capacity uint64) ([][]kernellist.Ref, []*Gap, error) {
	w := newWalker(c, src)
	refs, gaps := make([][]kernellist.Ref, len(starts)), make([]*Gap, len(starts))
	for s, start := range starts {
		start.Context = kernellist.NormalizeContext(start.Context)
		first, ok := w.at[start]
		if !ok {
			continue // untraced: no segment of this trace starts there
		}
		var err error
		_, gaps[s], err = w.back(first, capacity, func(i int, _ Print) {
			if w.ks[i].KernelOK { // one named otherwise cannot be traced by id
				refs[s] = append(refs[s], w.ks[i].Kernel)
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return refs, gaps, nil
}
