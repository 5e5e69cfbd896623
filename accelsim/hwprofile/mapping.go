package hwprofile

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// Pair says that, in a profile of Profiler on a GPU GPU selects, Expr
// over the profile's columns stands for the simulator statistic Stat.
type Pair struct {
	Stat     string
	Profiler Profiler
	// GPU is "all", "sm_XY" (compute capability X.Y), or a GPU's name
	// with _ for blanks, matched case-insensitively as a part of the
	// profile's device name.
	GPU    string
	Expr   *Expr
	Source string // file:line it was declared on
}

// GPU is what a profile says of the GPU it was taken on.
type GPU struct {
	Name string // as the profile names it; an index when that is all it says
	CC   string // "7.0"; "" when the profile does not say
}

// matches reports whether p holds for a profile of profiler on g.
func (p *Pair) matches(profiler Profiler, g GPU) bool {
	if p.Profiler != profiler {
		return false
	}
	switch sel := p.GPU; {
	case sel == "all":
		return true
	case strings.HasPrefix(sel, "sm_") && allDigits(sel[3:]) && len(sel) > 4:
		return g.CC != "" && strings.ReplaceAll(g.CC, ".", "") == sel[3:]
	default:
		return strings.Contains(strings.ToLower(g.Name), strings.ToLower(strings.ReplaceAll(sel, "_", " ")))
	}
}

// Mapping is the ordered table of pairs; a statistic's earlier pairs are
// preferred. A Mapping is immutable and safe for concurrent use.
type Mapping struct {
	Pairs []Pair
}

//go:embed mappings.txt
var builtinText string

var builtin = func() *Mapping {
	ps, err := ParsePairs(strings.NewReader(builtinText), "mappings.txt")
	if err != nil {
		panic(err)
	}
	return &Mapping{Pairs: ps}
}()

// Builtin is the table Cascade pairs counters with by default:
// mappings.txt, beside this file.
func Builtin() *Mapping { return builtin }

// With returns a table of extra's pairs, preferred, followed by m's.
func (m *Mapping) With(extra []Pair) *Mapping {
	return &Mapping{Pairs: append(append([]Pair(nil), extra...), m.Pairs...)}
}

// LoadFile reads pairs from a file of mappings.txt's form
// (CASCADE_COUNTER_MAP_FILE) and returns the built-in table with them
// added before its own.
func LoadFile(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := ParsePairs(f, path)
	if err != nil {
		return nil, err
	}
	return Builtin().With(ps), nil
}

// Stats returns the statistics the table names, each once, in order.
func (m *Mapping) Stats() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range m.Pairs {
		if !seen[p.Stat] {
			seen[p.Stat] = true
			out = append(out, p.Stat)
		}
	}
	return out
}

// Check returns an error naming the first pair, by file and line, whose
// statistic known does not know.
func (m *Mapping) Check(known func(stat string) bool) error {
	for _, p := range m.Pairs {
		if !known(p.Stat) {
			return fmt.Errorf("%s: statistic %q is not one the simulator's log is read for (accelsim/simstats/counters.txt, CASCADE_SIM_STATS_FILE, or a derived hit rate)", p.Source, p.Stat)
		}
	}
	return nil
}

// ParsePairs reads pair lines: statistic, profiler, GPU and an
// expression (the rest of the line), separated by blanks. Blank lines and
// lines starting with # are skipped. An error names the file (name) and
// line.
func ParsePairs(r io.Reader, name string) ([]Pair, error) {
	var ps []Pair
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parsePair(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		p.Source = name + ":" + strconv.Itoa(n)
		ps = append(ps, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ps, nil
}

func parsePair(line string) (Pair, error) {
	var p Pair
	f := strings.Fields(line)
	if len(f) < 4 {
		return p, fmt.Errorf("want statistic, profiler, GPU and an expression, got %q", line)
	}
	p.Stat, p.Profiler, p.GPU = f[0], Profiler(f[1]), f[2]
	if !validName(p.Stat) {
		return p, fmt.Errorf("statistic %q: use letters, digits and _ only", p.Stat)
	}
	if p.Profiler != NsightCompute && p.Profiler != Nvprof {
		return p, fmt.Errorf("%s: profiler %q: want ncu or nvprof", p.Stat, f[1])
	}
	// The expression is the rest of the line after the third field,
	// fields being split as strings.Fields splits them (a form feed too).
	rest := line
	for range 3 {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i < 0 {
			rest = ""
			break
		}
		rest = rest[i:]
	}
	e, err := ParseExpr(strings.TrimSpace(rest))
	if err != nil {
		return p, fmt.Errorf("%s: %w", p.Stat, err)
	}
	if len(e.Columns()) == 0 {
		return p, fmt.Errorf("%s: %q reads no counter", p.Stat, e)
	}
	p.Expr = e
	return p, nil
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || isNameStart(c) || isDigit(c)) {
			return false
		}
	}
	return s != ""
}

// Bound is a table bound to one profile: per statistic the pair taken.
type Bound struct {
	Stats []string
	Pairs []*Pair // the pair taken for each of Stats
	exprs []*node
	// Unmapped are the table's statistics the profile cannot give: no
	// pair for its profiler and GPU has all its columns.
	Unmapped []string
}

// Bind picks, for each statistic of the table, its first pair that holds
// for h's profiler and g and whose columns h has.
func (m *Mapping) Bind(h *Header, g GPU) *Bound {
	b := &Bound{}
	done := map[string]bool{}
	for i := range m.Pairs {
		p := &m.Pairs[i]
		if done[p.Stat] || !p.matches(h.Profiler, g) {
			continue
		}
		if n, ok := p.Expr.bind(h); ok {
			done[p.Stat] = true
			b.Stats, b.Pairs, b.exprs = append(b.Stats, p.Stat), append(b.Pairs, p), append(b.exprs, n)
		}
	}
	for _, s := range m.Stats() {
		if !done[s] {
			b.Unmapped = append(b.Unmapped, s)
		}
	}
	return b
}

// Eval evaluates each of b's statistics over a launch's values (of the
// header b was bound to) into out, reused: Absent where a value it reads
// is absent.
func (b *Bound) Eval(values []float64, out []float64) []float64 {
	out = out[:0]
	for _, e := range b.exprs {
		out = append(out, e.eval(values))
	}
	return out
}
