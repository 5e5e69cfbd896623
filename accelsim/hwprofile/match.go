package hwprofile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Traced is one kernel launch of the trace, in the trace's order, as
// matching needs it.
type Traced struct {
	Context   string // as the trace names its CUDA context; "" for one context
	ID        int    // the tracer's id, counting launches per context from 1
	Name      string // as traced (mangled)
	Demangled string // Name demangled; "" when it is not mangled
}

// Measured is one statistic of one traced kernel over the measurements
// matched to it: each profile (and each pass of a profile that repeats
// the program's launches) is one.
type Measured struct {
	Sum, Min, Max float64
	N             int
}

// Mean is the average of the measurements; Absent when there are none.
func (m Measured) Mean() float64 {
	if m.N == 0 {
		return Absent
	}
	return m.Sum / float64(m.N)
}

func (m *Measured) add(v float64) {
	if m.N == 0 || v < m.Min {
		m.Min = v
	}
	if m.N == 0 || v > m.Max {
		m.Max = v
	}
	m.Sum += v
	m.N++
}

// Lookahead is how many traced launches past the last matched one a
// profiled launch's name is looked for: a profiler that skipped or
// filtered kernels (--launch-skip, --kernel-name) skipped those.
const Lookahead = 4096

// MaxUnmatched is how many unmatched launches a report lists; it counts
// them all.
const MaxUnmatched = 20

// Matcher matches profiled launches to a trace's kernels and accumulates
// their statistics: by order within a CUDA context (the profile's
// contexts, each a process's, paired with the trace's as pair says), the
// names checked (a profiled name matches a traced one as printed,
// demangled, or by its function's name without scope, template arguments
// and parameters, as the profilers print it).
type Matcher struct {
	kernels []Traced
	byCtx   [][]int // per trace context, in first-appearance order: its kernels' indexes
	stats   []string
	index   map[string]int
	values  []Measured // kernel × stat
}

// NewMatcher returns a matcher for the trace's kernels, in the trace's
// order, accumulating the named statistics.
func NewMatcher(kernels []Traced, stats []string) *Matcher {
	m := &Matcher{kernels: kernels, stats: stats, index: map[string]int{}, values: make([]Measured, len(kernels)*len(stats))}
	for i, s := range stats {
		m.index[s] = i
	}
	ctx := map[string]int{}
	for i, k := range kernels {
		c, ok := ctx[k.Context]
		if !ok {
			c = len(m.byCtx)
			ctx[k.Context] = c
			m.byCtx = append(m.byCtx, nil)
		}
		m.byCtx[c] = append(m.byCtx[c], i)
	}
	return m
}

// Stats returns the statistics the matcher accumulates.
func (m *Matcher) Stats() []string { return m.stats }

// Values returns kernel k's measurements, one per statistic of Stats.
func (m *Matcher) Values(k int) []Measured {
	return m.values[k*len(m.stats) : (k+1)*len(m.stats)]
}

// Unmatched is a profiled launch no traced kernel was matched to.
type Unmatched struct {
	Line   int
	Kernel string
	Why    string
}

// Report is what matching one profile did.
type Report struct {
	File     string
	Profiler Profiler
	GPU      GPU
	Launches int // profiled launches read
	Matched  int
	// Passes is how many times the profile went through the trace's
	// launches of a context (repeated runs of the program in one file).
	Passes int
	// Unmatched lists the first MaxUnmatched launches not matched, and
	// UnmatchedCount counts them all.
	Unmatched      []Unmatched
	UnmatchedCount int
	Stats          []string // the statistics the profile gave
	Unmapped       []string // the table's statistics it could not give
	Notes          []string // columns of text taken as absent
	Skipped        int      // rows that are not launches (memory copies)
	// Contexts counts the profile's CUDA contexts, each a process's
	// (Nsight Compute numbers contexts per process), and TraceContexts
	// the trace's. Unpaired names the trace's contexts no context of the
	// profile was paired with, in the trace's order, when the profile has
	// launches: their kernels have nothing from it.
	Contexts, TraceContexts int
	Unpaired                []string
}

type cursor struct{ pos, pass int }

// profContext is a context of a profile: a process's (-1 without a
// Process ID column) context (-1 without a Context column).
type profContext struct{ process, context int64 }

func (c profContext) String() string {
	s := "context " + strconv.FormatInt(c.context, 10)
	if c.context < 0 {
		s = "no context"
	}
	if c.process >= 0 {
		s = "process " + strconv.FormatInt(c.process, 10) + "'s " + s
	}
	return s
}

// Add reads a profile to its end, matching its launches and adding their
// statistics (those of table bound to its header and GPU). A malformed
// profile is an error naming its file, line and column; what it added
// before the error stays added, so callers read a profile into a fresh
// Matcher, or check it first, when it must be all or nothing.
func (m *Matcher) Add(r *Reader, table *Mapping) (Report, error) {
	rep := Report{File: r.name, Profiler: r.h.Profiler, TraceContexts: len(m.byCtx)}
	var bound *Bound
	var statAt []int // bound statistic → index in m.stats, -1 when not accumulated
	var out []float64
	ctxOf := map[profContext]int{} // → the trace's context paired with it, -1 none
	paired := make([]bool, len(m.byCtx))
	cursors := make([]cursor, len(m.byCtx))
	var l Launch
	for {
		err := r.Next(&l)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rep, err
		}
		rep.Launches++
		if bound == nil {
			rep.GPU = GPU{Name: l.Device, CC: l.CC}
			bound = table.Bind(&r.h, rep.GPU)
			rep.Stats, rep.Unmapped = bound.Stats, bound.Unmapped
			for _, s := range bound.Stats {
				i, ok := m.index[s]
				if !ok {
					i = -1
				}
				statAt = append(statAt, i)
			}
		}
		pc := profContext{l.Process, l.Context}
		c, ok := ctxOf[pc]
		if !ok {
			c = m.pair(paired, l.Kernel)
			ctxOf[pc] = c
		}
		var k int
		var why string
		if c < 0 {
			k, why = -1, fmt.Sprintf("the profile's %s (its context %d by first appearance) has no counterpart: the trace's %d context%s are each paired with one of the profile's before it", pc, len(ctxOf), len(m.byCtx), plural(len(m.byCtx)))
		} else {
			k, why = m.match(c, &cursors, l.Kernel)
		}
		if k < 0 {
			rep.UnmatchedCount++
			if len(rep.Unmatched) < MaxUnmatched {
				rep.Unmatched = append(rep.Unmatched, Unmatched{Line: l.Line, Kernel: l.Kernel, Why: why})
			}
			continue
		}
		rep.Matched++
		out = bound.Eval(l.Values, out)
		vals := m.Values(k)
		for i, v := range out {
			if statAt[i] >= 0 && Present(v) && !math.IsInf(v, 0) {
				vals[statAt[i]].add(v)
			}
		}
	}
	for _, cur := range cursors {
		rep.Passes = max(rep.Passes, cur.pass)
	}
	rep.Contexts = len(ctxOf)
	for c, p := range paired {
		if !p && rep.Launches > 0 {
			rep.Unpaired = append(rep.Unpaired, m.kernels[m.byCtx[c][0]].Context)
		}
	}
	rep.Notes, rep.Skipped = r.Notes(), r.Skipped
	return rep, nil
}

// pair returns the trace's context a context of the profile that first
// appears with a launch named name is paired with, and marks it paired:
// of those not paired yet, the one that launches a kernel of that name
// soonest from its start (within Lookahead launches: contexts running
// other kernels are told apart), the first in the trace's order on a tie
// (contexts running the same kernels pair in order of first appearance),
// else the first not paired yet; -1 when every one is paired.
func (m *Matcher) pair(paired []bool, name string) int {
	c, at := -1, Lookahead
	first := -1
	for i, list := range m.byCtx {
		if paired[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		for j, k := range list[:min(len(list), at)] {
			if SameKernel(m.kernels[k].Name, m.kernels[k].Demangled, name) {
				c, at = i, j
				break
			}
		}
	}
	if c < 0 {
		c = first
	}
	if c >= 0 {
		paired[c] = true
	}
	return c
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// match returns the index of the traced kernel a launch named name of
// the trace's c-th context is, or -1 and why not.
func (m *Matcher) match(c int, cursors *[]cursor, name string) (int, string) {
	list, cur := m.byCtx[c], &(*cursors)[c]
	find := func(from int) int {
		for j := from; j < len(list) && j < from+Lookahead; j++ {
			k := m.kernels[list[j]]
			if SameKernel(k.Name, k.Demangled, name) {
				return j
			}
		}
		return -1
	}
	if j := find(cur.pos); j >= 0 {
		if cur.pass == 0 {
			cur.pass = 1
		}
		cur.pos = j + 1
		return list[j], ""
	}
	if cur.pos == len(list) { // through the trace's launches: a repeated run?
		if j := find(0); j >= 0 {
			cur.pass++
			cur.pos = j + 1
			return list[j], ""
		}
	}
	after := "at the start of the trace"
	if cur.pos > 0 {
		k := m.kernels[list[cur.pos-1]]
		after = fmt.Sprintf("after kernel %d (%s)", k.ID, display(k))
	}
	ctx := ""
	if k := m.kernels[list[0]]; k.Context != "" {
		ctx = " of context " + k.Context
	}
	return -1, fmt.Sprintf("no traced kernel of that name within %d launches %s%s", Lookahead, after, ctx)
}

func display(k Traced) string {
	if k.Demangled != "" {
		return baseName(k.Demangled)
	}
	return k.Name
}

// SameKernel reports whether a profiled kernel name stands for the traced
// one (name, demangled): equal to either, or naming the same function
// once scope, template arguments, return type and parameters are dropped
// ("void ns::vecAdd<float>(float *, int)" and "vecAdd(float*, int)").
func SameKernel(name, demangled, profiled string) bool {
	if profiled == name || demangled != "" && profiled == demangled {
		return true
	}
	if strings.HasPrefix(profiled, "_Z") {
		return false // mangled: only the same mangled name
	}
	t := name
	if demangled != "" {
		t = demangled
	}
	b := baseName(profiled)
	return b != "" && b == baseName(t)
}

// baseName is a C++ function's name without return type, scope, template
// arguments and parameters.
func baseName(s string) string {
	s = strings.TrimSpace(s)
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		case '(':
			if depth == 0 && i > 0 {
				s = s[:i]
				i = len(s)
			}
		}
	}
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ">") { // template arguments
		depth = 0
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] == '>' {
				depth++
			} else if s[i] == '<' {
				if depth--; depth == 0 {
					s = s[:i]
					break
				}
			}
		}
	}
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	return s
}
