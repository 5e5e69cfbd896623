package l2warm

import (
	"slices"
	"sort"
)

// LineShift is log2 of the line size footprints count in: 128 bytes, the
// L2 line of every tested config.
const LineShift = 7

// LineBytes is the size of a line.
const LineBytes = 1 << LineShift

// Span is the lines Lo to Hi-1 (line numbers: addresses >> LineShift).
type Span struct{ Lo, Hi uint64 }

// Lines is a set of lines: sorted, disjoint, non-adjacent spans.
type Lines []Span

// Count is the number of lines in l.
func (l Lines) Count() uint64 {
	var n uint64
	for _, s := range l {
		n += s.Hi - s.Lo
	}
	return n
}

// Bytes is the size of the lines of l.
func (l Lines) Bytes() uint64 { return l.Count() << LineShift }

// Has reports whether l holds line n.
func (l Lines) Has(n uint64) bool {
	i := sort.Search(len(l), func(i int) bool { return l[i].Hi > n })
	return i < len(l) && l[i].Lo <= n
}

// Union is the lines in a or b.
func Union(a, b Lines) Lines {
	out := make(Lines, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var s Span
		if j >= len(b) || i < len(a) && a[i].Lo <= b[j].Lo {
			s, i = a[i], i+1
		} else {
			s, j = b[j], j+1
		}
		if n := len(out); n > 0 && s.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, s.Hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

// Intersect is the lines in both a and b.
func Intersect(a, b Lines) Lines {
	var out Lines
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].Lo, b[j].Lo), min(a[i].Hi, b[j].Hi)
		if lo < hi {
			out = append(out, Span{lo, hi})
		}
		if a[i].Hi < b[j].Hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// Subtract is the lines of a not in b.
func Subtract(a, b Lines) Lines {
	var out Lines
	j := 0
	for _, s := range a {
		lo := s.Lo
		for j < len(b) && b[j].Hi <= lo {
			j++
		}
		for k := j; k < len(b) && b[k].Lo < s.Hi; k++ {
			if b[k].Lo > lo {
				out = append(out, Span{lo, b[k].Lo})
			}
			lo = max(lo, b[k].Hi)
		}
		if lo < s.Hi {
			out = append(out, Span{lo, s.Hi})
		}
	}
	return out
}

// Last is the last n lines of l (all of l when it holds fewer).
func (l Lines) Last(n uint64) Lines {
	var out Lines
	for i := len(l) - 1; i >= 0 && n > 0; i-- {
		s := l[i]
		if s.Hi-s.Lo > n {
			s.Lo = s.Hi - n
		}
		n -= s.Hi - s.Lo
		out = append(out, s)
	}
	slices.Reverse(out)
	return out
}

// builder collects lines in any order with bounded memory: a buffer of
// line numbers folded into the spans whenever it fills.
type builder struct {
	spans Lines
	buf   []uint64
	last  uint64
	any   bool
}

const builderBuf = 1 << 16

// add adds the lines that bytes a to a+width-1 touch.
func (b *builder) add(a uint64, width int) {
	lo, hi := a>>LineShift, (a+uint64(max(width, 1))-1)>>LineShift
	for l := lo; l <= hi; l++ {
		if b.any && l == b.last {
			continue
		}
		b.last, b.any = l, true
		b.buf = append(b.buf, l)
		if len(b.buf) >= builderBuf {
			b.fold()
		}
	}
}

// fold merges the buffer into the spans.
func (b *builder) fold() {
	if len(b.buf) == 0 {
		return
	}
	slices.Sort(b.buf)
	var add Lines
	for _, l := range b.buf {
		if n := len(add); n > 0 && l <= add[n-1].Hi {
			add[n-1].Hi = max(add[n-1].Hi, l+1)
			continue
		}
		add = append(add, Span{l, l + 1})
	}
	b.spans = Union(b.spans, add)
	b.buf = b.buf[:0]
}

// lines is what was added.
func (b *builder) lines() Lines {
	b.fold()
	if b.spans == nil {
		return Lines{}
	}
	return b.spans
}
