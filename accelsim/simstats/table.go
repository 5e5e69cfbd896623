package simstats

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Kind says how a counter's printed value becomes one kernel's value, as
// Accel-Sim's example_stats.yml sorts its counters.
type Kind string

// The kinds of counters.
const (
	// Aggregate counters keep growing across kernels: a kernel's value is
	// the difference from the kernel printed before it.
	Aggregate Kind = "aggregate"
	// PerKernel values are reset each kernel and taken as printed.
	PerKernel Kind = "kernel"
	// Rate values are snapshots of the whole run so far, taken as printed.
	Rate Kind = "rate"
)

// Counter is one statistic read from the log.
type Counter struct {
	Name    string
	Kind    Kind
	Unit    string
	Pattern *regexp.Regexp // its first group is the value

	prefix string // what every line it matches starts with, after blanks
}

// keyLen is how many leading bytes of a line pick the counters to try on
// it: short enough for the shortest prefix (L2_BW), long enough that most
// lines find none.
const keyLen = 4

// Table is the ordered set of counters a run reads. A value's index in
// [Values] is its counter's index here. A Table is immutable and safe for
// concurrent use.
type Table struct {
	Counters []Counter
	index    map[string]int   // name → index
	byKey    map[string][]int // a line's first keyLen bytes → counters that may match it
	anyLine  []int            // counters whose lines start with no known keyLen bytes
}

//go:embed counters.txt
var builtinText string

var builtin = mustTable(builtinText)

// Builtin is the table Cascade reads by default: counters.txt, beside this
// file.
func Builtin() *Table { return builtin }

func mustTable(text string) *Table {
	cs, err := ParseCounters(strings.NewReader(text), "counters.txt")
	if err != nil {
		panic(err)
	}
	t, err := NewTable(cs)
	if err != nil {
		panic(err)
	}
	return t
}

// NewTable makes a table of the given counters, in their order. Names must
// be unique.
func NewTable(cs []Counter) (*Table, error) {
	t := &Table{Counters: cs, index: map[string]int{}, byKey: map[string][]int{}}
	for i, c := range cs {
		if _, dup := t.index[c.Name]; dup {
			return nil, fmt.Errorf("counter %q is defined twice", c.Name)
		}
		t.index[c.Name] = i
		if len(c.prefix) < keyLen {
			t.anyLine = append(t.anyLine, i)
		} else {
			k := c.prefix[:keyLen]
			t.byKey[k] = append(t.byKey[k], i)
		}
	}
	return t, nil
}

// With returns a table of t's counters followed by extra.
func (t *Table) With(extra []Counter) (*Table, error) {
	return NewTable(append(append([]Counter(nil), t.Counters...), extra...))
}

// Index returns the index of the named counter, or -1.
func (t *Table) Index(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	return -1
}

// Known reports whether name is one of t's counters or a derived hit rate
// ([Ratios]): a statistic runs read for.
func (t *Table) Known(name string) bool {
	if t.Index(name) >= 0 {
		return true
	}
	for _, r := range Ratios {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Names returns the counters' names in order.
func (t *Table) Names() []string {
	names := make([]string, len(t.Counters))
	for i, c := range t.Counters {
		names[i] = c.Name
	}
	return names
}

// LoadFile reads counters from a file of counters.txt's form
// (CASCADE_SIM_STATS_FILE) and returns the built-in table with them added.
func LoadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := ParseCounters(f, path)
	if err != nil {
		return nil, err
	}
	t, err := Builtin().With(cs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseCounters reads counter lines: name, kind, unit and a regular
// expression with one group, separated by blanks (the expression is the
// rest of the line). Blank lines and lines starting with # are skipped.
// An error names the file (name) and line.
func ParseCounters(r io.Reader, name string) ([]Counter, error) {
	var cs []Counter
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := parseCounter(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		cs = append(cs, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cs, nil
}

func parseCounter(line string) (Counter, error) {
	var c Counter
	f := strings.Fields(line)
	if len(f) < 4 {
		return c, fmt.Errorf("want name, kind, unit and a regular expression, got %q", line)
	}
	c.Name, c.Kind, c.Unit = f[0], Kind(f[1]), f[2]
	if !validName(c.Name) {
		return c, fmt.Errorf("name %q: use letters, digits and _ only", c.Name)
	}
	switch c.Kind {
	case Aggregate, PerKernel, Rate:
	default:
		return c, fmt.Errorf("%s: kind %q: want aggregate, kernel or rate", c.Name, f[1])
	}
	// The expression is the rest of the line after the unit.
	rest := line
	for range 3 {
		rest = strings.TrimLeft(rest, " \t")
		rest = rest[strings.IndexAny(rest, " \t"):]
	}
	expr := strings.TrimSpace(rest)
	re, err := regexp.Compile(expr)
	if err != nil {
		return c, fmt.Errorf("%s: %w", c.Name, err)
	}
	if re.NumSubexp() < 1 {
		return c, fmt.Errorf("%s: %q has no group for the value", c.Name, expr)
	}
	c.Pattern = re
	c.prefix = literalPrefix(expr)
	return c, nil
}

func validName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// literalPrefix is the text every line expr matches starts with, after
// its leading blanks: the literal that follows a leading ^ and \s* or \s+.
func literalPrefix(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var b strings.Builder
loop:
	for _, s := range subs {
		switch s.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpEmptyMatch:
			continue
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
			if b.Len() == 0 && isBlankClass(s.Sub[0]) {
				continue // leading \s* or \s+: lines are matched trimmed
			}
		case syntax.OpLiteral:
			if s.Flags&syntax.FoldCase == 0 {
				b.WriteString(string(s.Rune))
				continue
			}
		}
		break loop
	}
	return b.String()
}

func isBlankClass(re *syntax.Regexp) bool {
	if re.Op != syntax.OpCharClass {
		return false
	}
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
			if r == ' ' || r == '\t' {
				return true
			}
		}
	}
	return false
}
