package posttraces

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// A trace taken in several tracer runs, one a range of kernels
// (DYNAMIC_KERNEL_LIMIT_START/END with TERMINATE_UPON_LIMIT: a sampling
// plan's traceList), has one raw kernel list a run and context: each run
// executes the program from its start, so its list holds every
// MemcpyHtoD up to its range's last kernel, and the kernel lines of its
// range only. The lists of one context are uploaded side by side, the
// tracer's name followed by "-" and anything (kernelslist_ctx_0x1-5-7,
// kernelslist-20-22; tracedir.RawListContext). mergeRuns makes them the
// one list a single run tracing every range would have written: the
// copies once, in program order, each kernel line after the copies that
// preceded it in its run. So a run of a range's kernels replays the same
// copies before them as on the trace taken whole.

// mergeRuns merges the lists of each context that has more than one
// (kernelslist_ctx_X and kernelslist_ctx_X-…), in findLists order, into
// one list named as the tracer names it, and returns the lists and the
// .g paths of the merged ones' parts (left by an earlier run, to be
// removed). A list whose copies are not a prefix of the longest one's is
// not a run of the same program: an error naming both.
func mergeRuns(dir string, lists []*kernelList) ([]*kernelList, []string, error) {
	type group struct {
		ctx   string
		parts []*kernelList
	}
	var groups []*group
	byCtx := map[string]*group{}
	for _, l := range lists {
		ctx, _ := tracedir.RawListContext(filepath.Base(l.path))
		g, ok := byCtx[ctx]
		if !ok {
			g = &group{ctx: ctx}
			byCtx[ctx] = g
			groups = append(groups, g)
		}
		g.parts = append(g.parts, l)
	}
	out := make([]*kernelList, 0, len(groups))
	var stale []string
	for _, g := range groups {
		if len(g.parts) == 1 {
			out = append(out, g.parts[0])
			continue
		}
		name := tracedir.RawKernelList
		if g.ctx != "" {
			name = tracedir.RawKernelListCtxPrefix + g.ctx
		}
		m, err := mergeParts(filepath.Join(dir, name), g.parts)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range g.parts {
			if p.path != m.path {
				stale = append(stale, p.path+".g")
			}
		}
		stale = append(stale, m.path+".g")
		out = append(out, m)
	}
	// In findLists order of the names the tracer gives.
	canonical := func(l *kernelList) string {
		if ctx, _ := tracedir.RawListContext(filepath.Base(l.path)); ctx != "" {
			return tracedir.RawKernelListCtxPrefix + ctx
		}
		return tracedir.RawKernelList
	}
	slices.SortStableFunc(out, func(a, b *kernelList) int { return compareLists(canonical(a), canonical(b)) })
	return out, stale, nil
}

// mergeParts merges the lists of one context's tracer runs.
func mergeParts(path string, parts []*kernelList) (*kernelList, error) {
	type kernel struct {
		line   string
		copies int // copies before it in its run
	}
	var copies []string // the longest run's
	var longest *kernelList
	var kernels []kernel
	for _, p := range parts {
		n := 0
		for _, line := range p.lines {
			if strings.HasPrefix(line, "Memcpy") {
				if n < len(copies) && copies[n] != line {
					return nil, fmt.Errorf("%s and %s: the lists of one context's tracer runs must copy the same, in the same order: their copy %d differs (%q, %q)",
						traceRel(longest.path), traceRel(p.path), n+1, copies[n], line)
				}
				if n == len(copies) {
					copies, longest = append(copies, line), p
				}
				n++
				continue
			}
			kernels = append(kernels, kernel{line, n})
		}
		if longest == nil {
			longest = p
		}
	}
	// In launch order: after the same copies, by kernel id (a context's
	// ids count its launches); a kernel two runs traced, once.
	id := func(line string) int {
		r, _ := kernellist.ParseTraceFileName(line)
		return r.ID
	}
	slices.SortStableFunc(kernels, func(a, b kernel) int {
		if a.copies != b.copies {
			return a.copies - b.copies
		}
		return id(a.line) - id(b.line)
	})
	kernels = slices.CompactFunc(kernels, func(a, b kernel) bool { return a.line == b.line })
	m := &kernelList{path: path}
	k := 0
	for i := 0; i <= len(copies); i++ {
		for ; k < len(kernels) && kernels[k].copies == i; k++ {
			m.lines = append(m.lines, kernels[k].line)
		}
		if i < len(copies) {
			m.lines = append(m.lines, copies[i])
		}
	}
	return m, nil
}
