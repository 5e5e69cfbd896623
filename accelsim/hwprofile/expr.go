package hwprofile

import (
	"fmt"
	"strconv"
	"strings"
)

// Expr is a mapping's arithmetic over a profile's columns: column names
// (metric names as the profiler prints them, "quoted" when they hold
// blanks: "Grid X"), numbers, + - * / and parentheses, as Accel-Sim's
// correlator writes its hw_eval lines without the np.average around them.
type Expr struct {
	text string
	root *node
}

type node struct {
	op    byte // 0 a number, 'c' a column, or + - * / and 'n' (negation)
	num   float64
	col   string
	l, r  *node
	index int // the column's index once resolved against a header
}

// String returns the expression as written.
func (e *Expr) String() string { return e.text }

// Columns returns the column names the expression reads, each once.
func (e *Expr) Columns() []string {
	var out []string
	var walk func(*node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.op == 'c' {
			for _, c := range out {
				if c == n.col {
					return
				}
			}
			out = append(out, n.col)
		}
		walk(n.l)
		walk(n.r)
	}
	walk(e.root)
	return out
}

// ParseExpr parses an expression.
func ParseExpr(s string) (*Expr, error) {
	p := &exprParser{s: s}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.blanks()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("%q: unexpected %q at character %d", s, p.s[p.i:], p.i+1)
	}
	return &Expr{text: s, root: n}, nil
}

type exprParser struct {
	s string
	i int
}

func (p *exprParser) blanks() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) sum() (*node, error) {
	l, err := p.product()
	for err == nil {
		p.blanks()
		if p.i >= len(p.s) || p.s[p.i] != '+' && p.s[p.i] != '-' {
			return l, nil
		}
		op := p.s[p.i]
		p.i++
		var r *node
		if r, err = p.product(); err == nil {
			l = &node{op: op, l: l, r: r}
		}
	}
	return nil, err
}

func (p *exprParser) product() (*node, error) {
	l, err := p.unary()
	for err == nil {
		p.blanks()
		if p.i >= len(p.s) || p.s[p.i] != '*' && p.s[p.i] != '/' {
			return l, nil
		}
		op := p.s[p.i]
		p.i++
		var r *node
		if r, err = p.unary(); err == nil {
			l = &node{op: op, l: l, r: r}
		}
	}
	return nil, err
}

func (p *exprParser) unary() (*node, error) {
	p.blanks()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("%q ends where a value is wanted", p.s)
	}
	switch c := p.s[p.i]; {
	case c == '-':
		p.i++
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: 'n', l: n}, nil
	case c == '(':
		p.i++
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		p.blanks()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("%q: a ( is not closed", p.s)
		}
		p.i++
		return n, nil
	case c == '"':
		j := strings.IndexByte(p.s[p.i+1:], '"')
		if j <= 0 {
			return nil, fmt.Errorf("%q: a quoted column name is not closed, or empty", p.s)
		}
		n := &node{op: 'c', col: p.s[p.i+1 : p.i+1+j]}
		p.i += j + 2
		return n, nil
	case c >= '0' && c <= '9' || c == '.':
		j := p.i
		for j < len(p.s) && (isDigit(p.s[j]) || p.s[j] == '.' || p.s[j] == 'e' || p.s[j] == 'E' ||
			(p.s[j] == '-' || p.s[j] == '+') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E')) {
			j++
		}
		v, err := strconv.ParseFloat(p.s[p.i:j], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a number", p.s, p.s[p.i:j])
		}
		p.i = j
		return &node{num: v}, nil
	case isNameStart(c):
		j := p.i
		for j < len(p.s) && (isNameStart(p.s[j]) || isDigit(p.s[j]) || p.s[j] == '.') {
			j++
		}
		n := &node{op: 'c', col: p.s[p.i:j]}
		p.i = j
		return n, nil
	}
	return nil, fmt.Errorf("%q: unexpected %q at character %d", p.s, p.s[p.i:p.i+1], p.i+1)
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// bind resolves the expression's columns against a header, returning a
// copy; ok is false when a column is missing.
func (e *Expr) bind(h *Header) (*node, bool) {
	var b func(*node) (*node, bool)
	b = func(n *node) (*node, bool) {
		if n == nil {
			return nil, true
		}
		c := *n
		if c.op == 'c' {
			c.index = h.Column(c.col)
			if c.index < 0 || h.Identity[c.index] {
				return nil, false
			}
		}
		var ok bool
		if c.l, ok = b(n.l); !ok {
			return nil, false
		}
		if c.r, ok = b(n.r); !ok {
			return nil, false
		}
		return &c, true
	}
	return b(e.root)
}

// eval evaluates a bound expression over one launch's values: Absent
// when a value it reads is, or it divides by zero.
func (n *node) eval(v []float64) float64 {
	switch n.op {
	case 0:
		return n.num
	case 'c':
		return v[n.index]
	case 'n':
		return -n.l.eval(v)
	}
	a, b := n.l.eval(v), n.r.eval(v)
	switch n.op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	}
	if b == 0 {
		return Absent
	}
	return a / b
}
