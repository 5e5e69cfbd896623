package simstats

// Ratio is a statistic derived from two counters: hits over accesses,
// instructions over energy. Ratios are computed here and nowhere else,
// from the kernel's or the run's summed counters (never by averaging
// kernels' ratios).
type Ratio struct {
	Name, Num, Den string
	Unit           string
	// Optional ratios are derived only by tables that have both of their
	// counters (the power counters, which only a run simulated with
	// AccelWattch records): a table without them derives exactly what it
	// did before they existed.
	Optional bool
}

// Ratios are the derived statistics: the hit rates, each a fraction from
// 0 to 1, for every table; instructions per joule (performance per watt:
// instructions a second per watt) for tables with an energy counter.
var Ratios = []Ratio{
	{Name: "l2_read_hit_rate", Num: "l2_read_hits", Den: "l2_read_accesses", Unit: "fraction"},
	{Name: "l2_write_hit_rate", Num: "l2_write_hits", Den: "l2_write_accesses", Unit: "fraction"},
	{Name: "l1d_read_hit_rate", Num: "l1d_read_hits", Den: "l1d_read_accesses", Unit: "fraction"},
	{Name: "l1d_write_hit_rate", Num: "l1d_write_hits", Den: "l1d_write_accesses", Unit: "fraction"},
	{Name: "insts_per_joule", Num: "instructions", Den: "energy", Unit: "insts/J", Optional: true},
}

// RatiosOf returns the ratios t derives, in the order of [Ratios]: every
// ratio that is not optional, and the optional ones whose two counters t
// has.
func RatiosOf(t *Table) []Ratio {
	out := make([]Ratio, 0, len(Ratios))
	for _, r := range Ratios {
		if r.Optional && (t.Index(r.Num) < 0 || t.Index(r.Den) < 0) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Derive returns each of [RatiosOf] t for v, read with t: absent when
// either counter is, or when the denominator is not positive.
func Derive(t *Table, v Values) []float64 {
	rs := RatiosOf(t)
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = Absent
		n, d := t.Index(r.Num), t.Index(r.Den)
		if n < 0 || d < 0 || n >= len(v) || d >= len(v) {
			continue
		}
		if Present(v[n]) && Present(v[d]) && v[d] > 0 {
			out[i] = v[n] / v[d]
		}
	}
	return out
}

// Summary is one counter over a whole run.
type Summary struct {
	Counter Counter
	// Value is the sum over kernels of an aggregate counter, the mean of
	// a per-kernel one, and the last kernel's value of a rate.
	Value float64
	// Kernels is how many kernels had a value.
	Kernels int
}

// Summarize sums, averages or takes the last of each counter over
// kernels, as its kind makes sense of: absent where no kernel had a value.
func Summarize(t *Table, kernels []Values) []Summary {
	s := NewSummer(t)
	for _, v := range kernels {
		s.Add(v)
	}
	return s.Summaries()
}

// Summer is [Summarize] one kernel at a time, for runs whose kernels are
// read a page at a time rather than held all at once.
type Summer struct {
	t    *Table
	sum  []float64
	last []float64
	n    []int
}

// NewSummer returns a Summer of the counters of t, with no kernel yet.
func NewSummer(t *Table) *Summer {
	return &Summer{t: t, sum: make([]float64, len(t.Counters)), last: make([]float64, len(t.Counters)), n: make([]int, len(t.Counters))}
}

// Add adds one kernel's values, in launch order.
func (s *Summer) Add(v Values) {
	for i := range s.t.Counters {
		if i >= len(v) || !Present(v[i]) {
			continue
		}
		s.n[i]++
		s.sum[i] += v[i]
		s.last[i] = v[i]
	}
}

// Summaries returns the summary of the kernels added so far.
func (s *Summer) Summaries() []Summary {
	out := make([]Summary, len(s.t.Counters))
	for i, c := range s.t.Counters {
		out[i] = Summary{Counter: c, Value: Absent, Kernels: s.n[i]}
		switch {
		case s.n[i] == 0:
		case c.Kind == Aggregate:
			out[i].Value = s.sum[i]
		case c.Kind == PerKernel:
			out[i].Value = s.sum[i] / float64(s.n[i])
		case c.Kind == Rate:
			out[i].Value = s.last[i]
		}
	}
	return out
}

// Totals returns the run's value of each counter as [Summarize] does, as
// Values, so that [Derive] gives the run's hit rates from summed counters.
func Totals(t *Table, kernels []Values) Values {
	s := Summarize(t, kernels)
	v := make(Values, len(s))
	for i := range s {
		v[i] = s[i].Value
	}
	return v
}
