package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// measuredBuilder indexes measured rows as they stream from a timing file
// (measured), noting what it cannot use or merges, row by row, for the
// run's timingProblems: "parse leniently, report precisely".
type measuredBuilder struct {
	keys     map[kernellist.Ref]*keyRows
	order    []kernellist.Ref // keys in the order first seen
	rows     int              // rows with a kernel id
	durRows  int              // rows with duration_ns
	cycRows  int              // rows with cycles and no duration_ns
	problems problemList
}

// rowMark stands in a problem for where the rows sit ("rows", or "" for
// a bare list), which the stream tells only once it has reached them.
const rowMark = "\x00"

// keyRows is the rows of one (kernel id, context).
type keyRows struct {
	times
	first, second int   // the first two rows' indexes (second -1: none)
	n             int   // rows
	invs          []int // their invocations, while distinct
	sameInv       bool  // two rows share an invocation, or one has none
}

func (b *measuredBuilder) path(i int) string { return fmt.Sprintf("%s[%d]", rowMark, i) }

// add takes one good row of the file.
func (b *measuredBuilder) add(r tracedir.TimingRow) {
	if b.keys == nil {
		b.keys = map[kernellist.Ref]*keyRows{}
	}
	b.rows++
	for _, name := range r.Unknown {
		b.problems.add("field "+name, fmt.Sprintf("%s: %s: not a field of a real-timing row (formats.md §7: %s); ignored",
			b.path(r.Index), name, strings.Join(tracedir.RealTimingFields, ", ")))
	}
	if r.DurationNs == nil && r.Cycles == nil {
		why := "no duration_ns or cycles"
		if len(r.Null) > 0 {
			why += " (" + strings.Join(r.Null, " and ") + " null)"
		}
		b.problems.add("no time", fmt.Sprintf("%s: kernel %d: %s: nothing to compare; skipped", b.path(r.Index), r.KernelID, why))
		return
	}
	if r.DurationNs != nil {
		b.durRows++
	} else {
		b.cycRows++
		if slices.Contains(r.Null, "duration_ns") {
			b.problems.add("null duration", fmt.Sprintf("%s: kernel %d: duration_ns is null; its cycles are used", b.path(r.Index), r.KernelID))
		}
	}
	ref := kernellist.Ref{ID: r.KernelID, Context: r.Context}
	k := b.keys[ref]
	if k == nil {
		k = &keyRows{first: r.Index, second: -1}
		b.keys[ref] = k
		b.order = append(b.order, ref)
	} else if k.second < 0 {
		k.second = r.Index
	}
	k.n++
	k.times.add(r)
	switch {
	case r.Invocation == nil || slices.Contains(k.invs, *r.Invocation):
		k.sameInv = true
	case !k.sameInv:
		k.invs = append(k.invs, *r.Invocation)
	}
	if r.Invocation == nil && k.n > 1 {
		k.sameInv = true
	}
}

// traceKernels is what the trace's kernel list says of its kernels: the
// contexts each kernel id has; nil when the list is not known (the rows
// are then taken as they are).
type traceKernels map[int][]string

func (tk traceKernels) contexts() []string {
	var all []string
	for _, cs := range tk {
		for _, c := range cs {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	slices.Sort(all)
	return all
}

// index finalizes the rows, leaving out, with a problem each, rows of a
// context or kernel id the trace does not have and context-less rows of
// a kernel the trace has in several contexts (which one they measured is
// ambiguous, as kernel_mapping.json's are); merges and overrides are
// reported too.
func (b *measuredBuilder) index(tk traceKernels) *measuredTimes {
	m := &measuredTimes{exact: map[kernellist.Ref]*times{}, noCtx: map[int]*times{}, byID: map[int]*times{}}
	var known []string
	if tk != nil {
		known = tk.contexts()
	}
	for _, ref := range b.order {
		k := b.keys[ref]
		p := b.path(k.first)
		if tk != nil {
			ctxs, idKnown := tk[ref.ID]
			switch {
			case ref.Context != "" && !slices.Contains(known, ref.Context) && !slices.Contains(known, ""):
				b.problems.add("context", fmt.Sprintf("%s: kernel %d: context %s is not one of the trace's (%s); ignored", p, ref.ID, ref.Context, strings.Join(known, ", ")))
				continue
			case !idKnown:
				b.problems.add("kernel id", fmt.Sprintf("%s: kernel %s: not in the trace; ignored", p, ref))
				continue
			case ref.Context != "" && !slices.Contains(ctxs, ref.Context) && !slices.Contains(ctxs, ""):
				b.problems.add("kernel id", fmt.Sprintf("%s: kernel %s: the trace has no kernel %d in context %s; ignored", p, ref, ref.ID, ref.Context))
				continue
			case ref.Context == "" && len(ctxs) > 1:
				b.problems.add("ambiguous", fmt.Sprintf("%s: kernel %d: no context, and the trace has it in %d contexts; ignored", p, ref.ID, len(ctxs)))
				continue
			}
		}
		if k.n > 1 && k.sameInv {
			b.problems.add("merged", fmt.Sprintf("%s and %s: kernel %s: %d rows without distinct invocations; their mean is used", p, b.path(k.second), ref, k.n))
		}
		if ref.Context == "" {
			m.noCtx[ref.ID] = &k.times
		} else {
			m.exact[ref] = &k.times
		}
		all := m.byID[ref.ID]
		if all == nil {
			all = &times{}
			m.byID[ref.ID] = all
		}
		all.merge(&k.times)
	}
	// A context-less row of a kernel whose rows name its context too is
	// not used for that context.
	for _, ref := range b.order {
		if ref.Context == "" {
			continue
		}
		loose, ok := b.keys[kernellist.Ref{ID: ref.ID}]
		if _, kept := m.noCtx[ref.ID]; ok && kept && m.exact[ref] != nil {
			b.problems.add("overridden", fmt.Sprintf("%s: kernel %d: no context, while %s names its context %s: that row is used for it, this one is not",
				b.path(loose.first), ref.ID, b.path(b.keys[ref].first), ref.Context))
		}
	}
	return m
}

// problemList is problems by kind, at most maxPerKind lines of each, then
// how many more: a file of a million bad rows says so in a few lines.
type problemList struct {
	kinds []string
	lines map[string][]string
	more  map[string]int
}

const maxPerKind = 5

func (p *problemList) add(kind, line string) {
	if p.lines == nil {
		p.lines, p.more = map[string][]string{}, map[string]int{}
	}
	if _, ok := p.lines[kind]; !ok {
		p.kinds = append(p.kinds, kind)
	}
	if len(p.lines[kind]) < maxPerKind {
		p.lines[kind] = append(p.lines[kind], line)
		return
	}
	p.more[kind]++
}

// list returns the problems, each prefixed with file, rowMark replaced
// by where its rows sit (rows, "" for none).
func (p *problemList) list(file string, rows ...string) []string {
	var out []string
	prefix := ""
	if len(rows) > 0 {
		prefix = rows[0]
	}
	for _, kind := range p.kinds {
		for _, l := range p.lines[kind] {
			out = append(out, file+": "+strings.ReplaceAll(l, rowMark, prefix))
		}
		if n := p.more[kind]; n > 0 {
			out = append(out, fmt.Sprintf("%s: and %d more like the %s above", file, n, plural(len(p.lines[kind]), "line")))
		}
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
