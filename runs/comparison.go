package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simlog"
)

// BadEntry is one entry of a timing file that was skipped, and why.
type BadEntry struct {
	Index  int    // index of the top-level entry: the row, step or mapping
	Path   string // where in the file: "rows[3]", "steps[0].events[2]", "[4]"
	Reason string // "kernel_id: missing", ...
}

func (b BadEntry) String() string { return b.Path + ": " + b.Reason }

// TimingRow is one measured kernel time from real_timing.json.
type TimingRow struct {
	KernelID   int
	KernelName string
	Context    string   // normalized with [kernellist.NormalizeContext]; "" when absent
	DurationNs *float64 // nil when absent
	Cycles     *int64
	Invocation *int
}

// RealTiming is a parsed real_timing.json: its good rows in file order, and
// the rows it skipped.
type RealTiming struct {
	Rows []TimingRow
	Bad  []BadEntry
}

// ReadRealTiming reads and parses a real_timing.json file.
func ReadRealTiming(path string) (RealTiming, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return RealTiming{}, fmt.Errorf("read real timing: %w", err)
	}
	rt, err := ParseRealTiming(data)
	if err != nil {
		return RealTiming{}, fmt.Errorf("%s: %w", path, err)
	}
	return rt, nil
}

// ParseRealTiming parses real_timing.json (formats.md §7): a list of rows or
// an object whose "rows" is that list. A row needs an integer kernel_id; it
// may have kernel_name, context (strings), duration_ns (a number > 0),
// cycles and invocation (integers >= 0). A row that breaks these rules is
// reported in Bad and skipped; only a file that is not such a list is an
// error.
func ParseRealTiming(data []byte) (RealTiming, error) {
	rows, prefix, err := topList(data, "rows")
	if err != nil {
		return RealTiming{}, err
	}
	var rt RealTiming
	for i, raw := range rows {
		row, reason := parseTimingRow(raw)
		if reason != "" {
			rt.Bad = append(rt.Bad, BadEntry{Index: i, Path: fmt.Sprintf("%s[%d]", prefix, i), Reason: reason})
			continue
		}
		rt.Rows = append(rt.Rows, row)
	}
	return rt, nil
}

// topList returns the entries of a JSON list that is either the whole
// document or the field key of a top-level object, with the path prefix
// naming where the list sits.
func topList(data []byte, key string) ([]json.RawMessage, string, error) {
	data = bytes.TrimSpace(data)
	var list []json.RawMessage
	if len(data) > 0 && data[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, "", fmt.Errorf("not JSON: %w", err)
		}
		raw, ok := obj[key]
		if !ok {
			return nil, "", fmt.Errorf("an object without %q", key)
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, "", fmt.Errorf("%s: want a list", key)
		}
		return list, key, nil
	}
	if err := json.Unmarshal(data, &list); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || len(data) == 0 {
			return nil, "", fmt.Errorf("not JSON: %w", err)
		}
		return nil, "", fmt.Errorf("want a list or an object with %q", key)
	}
	return list, "", nil
}

func parseTimingRow(raw json.RawMessage) (TimingRow, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return TimingRow{}, "want an object"
	}
	var row TimingRow
	f := fields{obj}
	id, ok, reason := f.int("kernel_id")
	if reason != "" {
		return row, reason
	}
	if !ok {
		return row, "kernel_id: missing"
	}
	row.KernelID = int(id)
	name, _, reason := f.string("kernel_name")
	if reason != "" {
		return row, reason
	}
	ctx, _, reason := f.string("context")
	if reason != "" {
		return row, reason
	}
	row.KernelName, row.Context = name, kernellist.NormalizeContext(ctx)

	d, ok, reason := f.number("duration_ns")
	switch {
	case reason != "":
		return row, reason
	case ok && !(d.f > 0):
		return row, "duration_ns: must be > 0"
	case ok:
		row.DurationNs = &d.f
	}
	c, ok, reason := f.int("cycles")
	switch {
	case reason != "":
		return row, reason
	case ok && c < 0:
		return row, "cycles: must be >= 0"
	case ok:
		row.Cycles = &c
	}
	n, ok, reason := f.int("invocation")
	switch {
	case reason != "":
		return row, reason
	case ok && n < 0:
		return row, "invocation: must be >= 0"
	case ok:
		inv := int(n)
		row.Invocation = &inv
	}
	return row, ""
}

// fields reads typed fields of a JSON object; each accessor reports whether
// the field is present (null counts as absent) and, when it has the wrong
// type, a reason naming it.
type fields struct{ obj map[string]json.RawMessage }

func (f fields) raw(name string) (json.RawMessage, bool) {
	raw := bytes.TrimSpace(f.obj[name])
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (f fields) string(name string) (string, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return "", false, ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, name + ": want a string, got " + jsonKind(raw)
	}
	return s, true, ""
}

func (f fields) int(name string) (int64, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return 0, false, ""
	}
	var n json.Number
	// json.Number also takes "12" in quotes: a string is not an integer.
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return 0, false, name + ": want an integer, got " + jsonKind(raw)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, false, name + ": want an integer, got " + n.String()
	}
	return i, true, ""
}

// nanos is a JSON number kept exact when it is an integer: timestamps in
// nanoseconds pass 2^53, beyond which float64 loses whole nanoseconds.
type nanos struct {
	i     int64
	f     float64
	exact bool
}

// sub gives a - b, exactly when both are integers.
func (a nanos) sub(b nanos) float64 {
	if a.exact && b.exact {
		return float64(a.i - b.i)
	}
	return a.f - b.f
}

func (f fields) number(name string) (nanos, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return nanos{}, false, ""
	}
	var n json.Number
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return nanos{}, false, name + ": want a number, got " + jsonKind(raw)
	}
	v, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(v, 0) {
		return nanos{}, false, name + ": want a number, got " + n.String()
	}
	out := nanos{f: v}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		out.i, out.exact = i, true
	}
	return out, true, ""
}

func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	}
	return string(raw)
}

// SimTime is one simulated kernel's time, as [Compare] and [ProjectSteps]
// take it.
type SimTime struct {
	Kernel kernellist.Ref
	Name   string
	SimNs  float64
}

// SimTimes turns log results into simulated times at the given core clock.
// Results whose kernel is unknown (trace name not of the kernel-N form) or
// that were truncated by the simulator's cycle limit are left out, as is
// everything when the clock is unknown.
func SimTimes(results []simlog.KernelResult, coreClockMHz float64) []SimTime {
	var out []SimTime
	for _, r := range results {
		ns, ok := r.SimTimeNs(coreClockMHz)
		if !ok || !r.KernelOK || r.Truncated {
			continue
		}
		out = append(out, SimTime{Kernel: r.Kernel, Name: r.Name, SimNs: ns})
	}
	return out
}

// KernelComparison is one kernel's simulated and measured time.
type KernelComparison struct {
	Kernel       kernellist.Ref
	Name         string
	SimNs        float64
	MeasuredNs   float64 // mean of the matching rows' duration_ns
	ErrorPct     float64 // 100 * (SimNs - MeasuredNs) / MeasuredNs
	Measurements int     // rows averaged into MeasuredNs
}

// Comparison sets a run's simulated kernel times against measured ones.
type Comparison struct {
	Kernels         []KernelComparison // in the order of the simulated kernels
	KernelsCompared int
	MAPE            float64  // mean of |ErrorPct|
	Correlation     *float64 // Pearson, SimNs vs MeasuredNs; nil with < 2 kernels or no variance
	SimTotalNs      float64  // sum over the compared kernels only
	MeasuredTotalNs float64  // sum over the compared kernels only
}

// Kernel returns the comparison of one kernel.
func (c Comparison) Kernel(ref kernellist.Ref) (KernelComparison, bool) {
	for _, k := range c.Kernels {
		if k.Kernel == ref {
			return k, true
		}
	}
	return KernelComparison{}, false
}

// Compare joins simulated kernels to measured rows and computes the run's
// error statistics. It reports false when no kernel could be compared.
//
// A row matches a simulated kernel with the same kernel id when the
// contexts agree: rows naming the kernel's context are used when there are
// any, else rows without a context. A simulated kernel without a context (a
// single-context trace) takes every row with its id. Rows without
// duration_ns take no part.
//
// A traced kernel id is one launch, so several rows for it (invocation 0,
// 1, ... or repeated measurements) measure the same work; they are
// averaged, and Measurements says how many there were.
func Compare(sim []SimTime, rows []TimingRow) (Comparison, bool) {
	var c Comparison
	var xs, ys []float64
	for _, s := range sim {
		var exact, loose []float64
		for _, r := range rows {
			if r.KernelID != s.Kernel.ID || r.DurationNs == nil {
				continue
			}
			switch {
			case s.Kernel.Context == "" || r.Context == "":
				loose = append(loose, *r.DurationNs)
			case r.Context == s.Kernel.Context:
				exact = append(exact, *r.DurationNs)
			}
		}
		ds := exact
		if len(ds) == 0 {
			ds = loose
		}
		if len(ds) == 0 {
			continue
		}
		measured := mean(ds)
		k := KernelComparison{
			Kernel: s.Kernel, Name: s.Name, SimNs: s.SimNs, MeasuredNs: measured,
			ErrorPct: 100 * (s.SimNs - measured) / measured, Measurements: len(ds),
		}
		c.Kernels = append(c.Kernels, k)
		c.MAPE += math.Abs(k.ErrorPct)
		c.SimTotalNs += k.SimNs
		c.MeasuredTotalNs += k.MeasuredNs
		xs, ys = append(xs, k.SimNs), append(ys, k.MeasuredNs)
	}
	c.KernelsCompared = len(c.Kernels)
	if c.KernelsCompared == 0 {
		return Comparison{}, false
	}
	c.MAPE /= float64(c.KernelsCompared)
	c.Correlation = pearson(xs, ys)
	return c, true
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// pearson is the correlation coefficient of xs and ys, or nil when it is
// undefined: fewer than two points, or either side constant.
func pearson(xs, ys []float64) *float64 {
	if len(xs) < 2 {
		return nil
	}
	mx, my := mean(xs), mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return nil
	}
	r := sxy / math.Sqrt(sxx*syy)
	r = math.Max(-1, math.Min(1, r)) // rounding can step just past ±1
	return &r
}
