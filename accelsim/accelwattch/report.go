package accelwattch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ReportName is the report's file name, in the simulator's working
// directory (a run's directory).
const ReportName = "accelwattch_power_report.log"

// Components are the parts of a kernel's average power the report breaks
// it into, in the report's order: its gpu_avg_<component> lines. They add
// up to the kernel's average power.
var Components = []string{
	"IBP", "ICP", "DCP", "TCP", "CCP", "SHRDP", "RFP", "INTP", "FPUP", "DPUP",
	"INT_MUL24P", "INT_MUL32P", "INT_MULP", "INT_DIVP", "FP_MULP", "FP_DIVP",
	"FP_SQRTP", "FP_LGP", "FP_SINP", "FP_EXP", "DP_MULP", "DP_DIVP", "TENSORP",
	"TEXP", "SCHEDP", "L2CP", "MCP", "NOCP", "DRAMP", "PIPEP", "IDLE_COREP",
	"CONSTP", "STATICP",
}

var componentIndex = func() map[string]int {
	m := make(map[string]int, len(Components))
	for i, c := range Components {
		m[c] = i
	}
	return m
}()

// Kernel is one kernel's block of the report. A figure the block did not
// give, or gave as nan or inf, is NaN.
type Kernel struct {
	UID  int    // kernel_launch_uid; 0 when the block did not say
	Name string // kernel_name
	// AvgPower, MaxPower and MinPower are the kernel's average, highest
	// and lowest power over its sampling windows, in watts.
	AvgPower, MaxPower, MinPower float64
	// Breakdown is the average power of each of [Components], in watts.
	Breakdown []float64
}

// Error is a malformed line of a report.
type Error struct {
	File string
	Line int // from 1
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxLine bounds a report's line: the real ones are short.
const maxLine = 1 << 20

// Reader reads a report one kernel at a time. It is not safe for
// concurrent use.
type Reader struct {
	sc   *bufio.Scanner
	name string
	line int
	cur  *Kernel // the block being read; nil before the first
	err  error   // the error that ended reading; io.EOF at the end
}

// NewReader returns a Reader of a report read from r; name (the file's
// path) is what its errors give as the file.
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{sc: sc, name: name}
}

// Next returns the next kernel's block, complete once the next block
// starts or the report ends; io.EOF after the last. A malformed line is
// an [*Error] naming the file and line, and ends reading.
func (r *Reader) Next() (Kernel, error) {
	if r.err != nil {
		return Kernel{}, r.err
	}
	for r.sc.Scan() {
		r.line++
		k, done, err := r.read(r.sc.Text())
		if err != nil {
			r.err = err
			return Kernel{}, err
		}
		if done {
			return k, nil
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		r.err = &Error{File: r.name, Line: r.line + 1, Msg: err.Error()}
		return Kernel{}, r.err
	}
	r.err = io.EOF
	if r.cur != nil {
		k := *r.cur
		r.cur = nil
		return k, nil
	}
	return Kernel{}, io.EOF
}

// read reads one line; done when it ended a block, which is k.
func (r *Reader) read(line string) (k Kernel, done bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || (strings.HasSuffix(line, ":") && !strings.Contains(line, "=")) {
		return Kernel{}, false, nil // a blank line, a section's title
	}
	key, val, ok := strings.Cut(line, "=")
	if !ok {
		return Kernel{}, false, r.errorf("want \"name = value\", not %s", quote(line))
	}
	key = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(key), ","))
	val = strings.TrimSpace(val)
	if key == "kernel_name" {
		if val == "" {
			return Kernel{}, false, r.errorf("kernel_name without a name")
		}
		prev := r.cur
		r.cur = newKernel(val)
		if prev != nil {
			return *prev, true, nil
		}
		return Kernel{}, false, nil
	}
	if r.cur == nil {
		return Kernel{}, false, r.errorf("%s before the first kernel_name", key)
	}
	switch key {
	case "kernel_launch_uid":
		uid, err := strconv.Atoi(val)
		if err != nil || uid < 0 {
			return Kernel{}, false, r.errorf("kernel_launch_uid %s is not a launch uid", quote(val))
		}
		r.cur.UID = uid
	case "kernel_avg_power":
		return Kernel{}, false, r.power(key, val, &r.cur.AvgPower)
	case "kernel_max_power":
		return Kernel{}, false, r.power(key, val, &r.cur.MaxPower)
	case "kernel_min_power":
		return Kernel{}, false, r.power(key, val, &r.cur.MinPower)
	default:
		if c, ok := strings.CutPrefix(key, "gpu_avg_"); ok {
			if i, ok := componentIndex[c]; ok {
				return Kernel{}, false, r.power(key, val, &r.cur.Breakdown[i])
			}
		}
		// Activity counts, the maximum and minimum breakdowns, the
		// accumulated figures: not read.
	}
	return Kernel{}, false, nil
}

func newKernel(name string) *Kernel {
	k := &Kernel{Name: name, AvgPower: math.NaN(), MaxPower: math.NaN(), MinPower: math.NaN(), Breakdown: make([]float64, len(Components))}
	for i := range k.Breakdown {
		k.Breakdown[i] = math.NaN()
	}
	return k
}

// power reads a figure in watts into dst, once a block.
func (r *Reader) power(key, val string, dst *float64) error {
	if !math.IsNaN(*dst) {
		return r.errorf("%s given twice in kernel %s's block", key, quote(r.cur.Name))
	}
	f, err := strconv.ParseFloat(val, 64)
	switch {
	case err == nil && !math.IsInf(f, 0):
		*dst = f
	case isNaNOrInf(val):
		// absent, as -nan is in the simulator's log
	default:
		return r.errorf("%s = %s is not a number", key, quote(val))
	}
	return nil
}

// isNaNOrInf reports whether s is how C++ prints a NaN or an infinity.
func isNaNOrInf(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, "+-"))
	return s == "nan" || s == "inf" || s == "infinity" || strings.HasPrefix(s, "nan(")
}

func (r *Reader) errorf(format string, args ...any) error {
	return &Error{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// quote quotes s for an error, cut short when long.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

// ReadFile reads every kernel of the report at path.
func ReadFile(path string) ([]Kernel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ks []Kernel
	r := NewReader(f, path)
	for {
		k, err := r.Next()
		if err == io.EOF {
			return ks, nil
		}
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
}
