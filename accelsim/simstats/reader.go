package simstats

import (
	"math"
	"strconv"
	"strings"
)

// Values are one kernel's statistics, indexed like its [Table]'s counters.
// An absent value (not printed, or printed as -nan) is NaN: use [Present].
type Values []float64

// Present reports whether v holds a value.
func Present(v float64) bool { return !math.IsNaN(v) }

// Absent is the value of a counter a kernel's block did not give.
var Absent = math.NaN()

// Kernel is one kernel's block of the log, from its kernel_name line to
// the next kernel's.
type Kernel struct {
	UID    int    // kernel_launch_uid; 0 when the block did not say
	Name   string // kernel_name
	Values Values
}

// blockStart begins each kernel's statistics block.
const blockStart = "kernel_name = "

// Reader reads kernels' statistics from an Accel-Sim log, line by line, as
// Accel-Sim's get_stats.py does: a kernel's block runs from its
// kernel_name line to the next one (or the end of the log), aggregate
// counters are diffed with the previous kernel's. It is not safe for
// concurrent use.
type Reader struct {
	t        *Table
	cur      *Kernel   // the block being read; nil before the first
	lastAgg  []float64 // each aggregate counter's latest cumulative value
	done     []Kernel
	fastPath []bool // counter i's expression is "<prefix>\s*=\s*(\S+)"
}

// NewReader returns a Reader of the counters of t.
func NewReader(t *Table) *Reader {
	r := &Reader{t: t, lastAgg: make([]float64, len(t.Counters)), fastPath: make([]bool, len(t.Counters))}
	for i, c := range t.Counters {
		r.fastPath[i] = isAssignment(c)
	}
	return r
}

// isAssignment reports whether c's expression is the common
// "[^][\s*]<literal>\s*=\s*(\S+)", which the Reader matches without the
// regular expression engine.
func isAssignment(c Counter) bool {
	expr := c.Pattern.String()
	expr = strings.TrimPrefix(expr, "^")
	expr = strings.TrimPrefix(expr, `\s*`)
	expr = strings.TrimPrefix(expr, `\s+`)
	return c.prefix != "" && expr == regexpQuote(c.prefix)+`\s*=\s*(\S+)`
}

// regexpQuote quotes s as the counters file writes literals: with a
// backslash before each of []().*+?^$|{}\ .
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`[]().*+?^$|{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Line reads one line of the log, without its newline.
func (r *Reader) Line(line string) {
	if name, ok := strings.CutPrefix(line, blockStart); ok {
		r.finish()
		v := make(Values, len(r.t.Counters))
		for i := range v {
			v[i] = Absent
		}
		r.cur = &Kernel{Name: strings.TrimSpace(name), Values: v}
		return
	}
	if r.cur == nil {
		return
	}
	trimmed := strings.TrimLeft(line, " \t")
	if r.cur.UID == 0 {
		if s, ok := strings.CutPrefix(trimmed, "kernel_launch_uid = "); ok {
			r.cur.UID, _ = strconv.Atoi(strings.TrimSpace(s))
			return
		}
	}
	if len(trimmed) >= keyLen {
		for _, i := range r.t.byKey[trimmed[:keyLen]] {
			r.match(i, line, trimmed)
		}
	}
	for _, i := range r.t.anyLine {
		r.match(i, line, trimmed)
	}
}

func (r *Reader) match(i int, line, trimmed string) {
	c := &r.t.Counters[i]
	if !strings.HasPrefix(trimmed, c.prefix) {
		return
	}
	var val string
	if r.fastPath[i] {
		rest := strings.TrimLeft(trimmed[len(c.prefix):], " \t")
		rest, ok := strings.CutPrefix(rest, "=")
		if !ok {
			return
		}
		rest = strings.TrimLeft(rest, " \t")
		if j := strings.IndexAny(rest, " \t\r"); j >= 0 {
			rest = rest[:j]
		}
		if rest == "" {
			return
		}
		val = rest
	} else {
		m := c.Pattern.FindStringSubmatchIndex(line)
		if m == nil || m[2] < 0 {
			return
		}
		val = line[m[2]:m[3]]
	}
	r.cur.Values[i] = parseValue(val)
}

// parseValue reads a printed number; -nan, inf and anything unreadable
// are absent, never zero.
func parseValue(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsInf(f, 0) {
		return Absent
	}
	return f
}

// finish turns the block being read into a kernel: aggregate counters
// become the difference from their previous cumulative value.
func (r *Reader) finish() {
	if r.cur == nil {
		return
	}
	for i, c := range r.t.Counters {
		if c.Kind != Aggregate || !Present(r.cur.Values[i]) {
			continue
		}
		total := r.cur.Values[i]
		r.cur.Values[i] = total - r.lastAgg[i]
		r.lastAgg[i] = total
	}
	r.done = append(r.done, *r.cur)
	r.cur = nil
}

// Finish ends the log: the last block becomes a kernel.
func (r *Reader) Finish() { r.finish() }

// Take returns the kernels whose blocks are complete since the last Take:
// a block is complete once the next one starts, or at Finish.
func (r *Reader) Take() []Kernel {
	k := r.done
	r.done = nil
	return k
}
