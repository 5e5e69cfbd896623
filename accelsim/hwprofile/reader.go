package hwprofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Profiler names the tool that wrote a profile.
type Profiler string

// The profilers whose CSV files are read.
const (
	NsightCompute Profiler = "ncu"    // ncu --csv --page raw
	Nvprof        Profiler = "nvprof" // nvprof --csv --print-gpu-trace [--metrics ...]
)

// Header is what a profile's header and units rows say.
type Header struct {
	Profiler Profiler
	Line     int      // the header's line
	Columns  []string // every column, as named
	// Units are each column's unit as printed (the row under the
	// header), and BaseUnits the unit its values are given in: times in
	// nanoseconds ("nsecond"), sizes in bytes, rates per second.
	Units, BaseUnits []string
	// Identity marks the columns that say which launch a row is (ID,
	// names, context, sizes, device): they have no values.
	Identity []bool
}

// Column returns the index of the named column, or -1.
func (h *Header) Column(name string) int { return slices.Index(h.Columns, name) }

// Launch is one profiled kernel launch: one row.
type Launch struct {
	Line  int // its line in the file
	Index int // 0-based among the file's launches
	// ID is Nsight Compute's ID (the profiled launch's index in the
	// process) or nvprof's Correlation_ID (which numbers API calls, not
	// launches); -1 when the file has neither.
	ID int64
	// Process is Nsight Compute's Process ID, -1 when the file has none:
	// it numbers contexts per process, so a context is a process's.
	Process         int64
	Context, Stream int64  // -1 when the file has no such column
	Kernel          string // as printed (nvprof's " [123]" suffix removed)
	Device          string // the GPU's name, or its index when that is all the file says
	CC              string // compute capability ("7.0"), when the file says
	// Values holds a value per column of the header, in base units:
	// Absent for identity columns and values the profiler did not give.
	Values []float64
}

// Reader reads a profile's launches in file order, in memory bounded by
// its longest line.
type Reader struct {
	name  string
	lines *lines
	sp    splitter
	h     Header

	kernel, id, ctx, stream, dev, devName, cc, start int
	factor                                           []float64
	headerLine                                       []byte
	index                                            int
	pid                                              int
	lastID                                           map[[2]int64]int64 // process, context → last ID
	lastIDLine                                       map[[2]int64]int
	lastStart                                        float64
	text                                             []textNote
	lastDev, lastDevName                             string
	Skipped                                          int // rows that are not kernel launches (nvprof's memory copies)
}

type textNote struct {
	n, line int
	value   string
}

// identity columns, by profiler; the rest are metrics.
var identity = map[string]bool{
	"ID": true, "Process ID": true, "Process Name": true, "Host Name": true, "Kernel Name": true,
	"Context": true, "Stream": true, "Block Size": true, "Grid Size": true, "Device": true, "CC": true,
	"Kernel Time": true, "Correlation_ID": true, "Kernel": true, "Name": true,
	"device__attribute_display_name": true,
}

// NewReader reads a profile's header and units rows: lines before the
// header (the profiler's ==PROF== or ==<pid>== messages, the program's
// output) are skipped. name is the file's name in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	pr := &Reader{name: name, lines: newLines(r, name), lastID: map[[2]int64]int64{}, lastIDLine: map[[2]int64]int{}, lastStart: math.Inf(-1)}
	if err := pr.readHeader(); err != nil {
		return nil, err
	}
	return pr, nil
}

// Header returns the profile's header.
func (r *Reader) Header() *Header { return &r.h }

func (r *Reader) errorf(line, col int, format string, args ...any) error {
	at := fmt.Sprintf("%s:%d", r.name, line)
	if col > 0 {
		at += fmt.Sprintf(":%d", col)
	}
	return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...))
}

// message reports lines the profilers print around their CSV.
func message(line []byte) bool { return bytes.HasPrefix(line, []byte("==")) }

func (r *Reader) readHeader() error {
	for {
		line, err := r.lines.next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: no profile in it: want Nsight Compute's raw page (a header starting \"ID\",\"Process ID\",... from ncu --csv --page raw) or nvprof's GPU trace (a header with \"Device\",\"Context\",\"Stream\" and \"Kernel\" or \"Name\" from nvprof --csv --print-gpu-trace)", r.name)
		}
		if err != nil {
			return err
		}
		if message(line) || !bytes.HasPrefix(line, []byte(`"`)) {
			continue // the program's output
		}
		if col, err := r.sp.split(line); err != nil {
			continue // the program's output, quoted
		} else if col != 0 {
			continue
		}
		cols := make([]string, len(r.sp.fields))
		for i, f := range r.sp.fields {
			cols[i] = string(f)
		}
		switch p, err := kind(cols); {
		case err != nil:
			return r.errorf(r.lines.n, 1, "%v", err)
		case p != "":
			r.h = Header{Profiler: p, Line: r.lines.n, Columns: cols}
			r.headerLine = append([]byte(nil), line...)
			return r.readUnits()
		}
	}
}

// kind tells a profile's header from other quoted lines, and the
// profilers' other CSV pages from those it reads.
func kind(cols []string) (Profiler, error) {
	has := func(c string) bool { return slices.Contains(cols, c) }
	switch {
	case cols[0] == "ID" && has("Metric Name") && has("Metric Value"):
		return "", errors.New("Nsight Compute's details page (a row per metric): export the raw page, ncu --csv --page raw")
	case cols[0] == "ID" && has("Kernel Name"):
		return NsightCompute, nil
	case cols[0] == "ID" && has("Process ID"):
		return "", errors.New(`Nsight Compute's raw page, but the header lacks the column "Kernel Name", which matching needs: export the page whole, ncu --csv --page raw`)
	case has("Invocations") && has("Metric Name") || has("Event Name") && has("Invocations"):
		return "", errors.New("nvprof's summary (per kernel name, over its invocations): profile with --print-gpu-trace for a row per launch")
	case cols[0] == "Type" && has("Time(%)"):
		return "", errors.New("nvprof's GPU summary: profile with --print-gpu-trace for a row per launch")
	case has("Device") && has("Context") && has("Stream") && (has("Kernel") || has("Name")):
		return Nvprof, nil
	}
	return "", nil
}

func (r *Reader) readUnits() error {
	h := &r.h
	n := len(h.Columns)
	h.Identity = make([]bool, n)
	for i, c := range h.Columns {
		h.Identity[i] = identity[c]
	}
	r.kernel = max(h.Column("Kernel Name"), h.Column("Kernel"), h.Column("Name"))
	r.id = max(h.Column("ID"), h.Column("Correlation_ID"))
	r.ctx, r.stream, r.dev, r.cc = h.Column("Context"), h.Column("Stream"), h.Column("Device"), h.Column("CC")
	r.devName, r.start, r.pid = h.Column("device__attribute_display_name"), -1, h.Column("Process ID")
	if h.Profiler == Nvprof {
		r.start = h.Column("Start")
	}
	for i, c := range h.Columns {
		if j := slices.Index(h.Columns[:i], c); j >= 0 && c != "" {
			return r.errorf(h.Line, i+1, "column %d, %q, is named again (column %d): the header is not one profiler's", i+1, c, j+1)
		}
	}
	for {
		line, err := r.lines.next()
		if errors.Is(err, io.EOF) {
			return r.errorf(r.lines.n+1, 0, "the file ends after its header: no units row and no launches")
		}
		if err != nil {
			return err
		}
		if message(line) || len(line) == 0 {
			continue
		}
		if col, err := r.sp.split(line); err != nil {
			return r.errorf(r.lines.n, col, "%v", err)
		}
		if len(r.sp.fields) != n {
			return r.errorf(r.lines.n, 0, "%d fields, and the header (line %d) names %d columns", len(r.sp.fields), h.Line, n)
		}
		if len(r.sp.fields[r.kernel]) != 0 {
			return r.errorf(r.lines.n, r.sp.cols[r.kernel], "no units row under the header (line %d): this row names a kernel, %q; the profiler writes each metric's unit (\"nsecond\", \"sector\", or empty) on the row under the header, so this file was edited", h.Line, r.sp.fields[r.kernel])
		}
		h.Units, h.BaseUnits, r.factor = make([]string, n), make([]string, n), make([]float64, n)
		for i, f := range r.sp.fields {
			u := string(f)
			h.Units[i] = u
			fac, base, _ := unitFactor(u)
			h.BaseUnits[i], r.factor[i] = base, fac
		}
		return nil
	}
}

// dropCorrelation drops the " [117]" (the correlation ID) nvprof's GPU
// trace puts after a kernel's name.
func dropCorrelation(name []byte) []byte {
	n := len(name)
	if n < 4 || name[n-1] != ']' {
		return name
	}
	i := bytes.LastIndexByte(name, '[')
	if i < 1 || name[i-1] != ' ' || i+1 == n-1 || !allDigits(string(name[i+1:n-1])) {
		return name
	}
	return name[:i-1]
}

// Next reads the next launch into l, reusing its Values; io.EOF at the
// end. A row that is not well formed is an error naming its line and
// column.
func (r *Reader) Next(l *Launch) error {
	h := &r.h
	for {
		line, err := r.lines.next()
		if err != nil {
			return err
		}
		if message(line) || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.Equal(line, r.headerLine) {
			return r.errorf(r.lines.n, 1, "the header again (first on line %d): two profiles in one file? Upload each profile as a file of its own", h.Line)
		}
		if col, err := r.sp.split(line); err != nil {
			return r.errorf(r.lines.n, col, "%v", err)
		}
		f := r.sp.fields
		if len(f) != len(h.Columns) {
			col := len(line) + 1
			if len(f) > len(h.Columns) {
				col = r.sp.cols[len(h.Columns)]
			}
			return r.errorf(r.lines.n, col, "%d fields, and the header (line %d) names %d columns", len(f), h.Line, len(h.Columns))
		}
		name := f[r.kernel]
		if h.Profiler == Nvprof && bytes.HasPrefix(name, []byte("[CUDA ")) {
			r.Skipped++ // [CUDA memcpy HtoD], [CUDA memset]
			continue
		}
		if h.Profiler == Nvprof {
			name = dropCorrelation(name)
		}
		if len(bytes.TrimSpace(name)) == 0 {
			return r.errorf(r.lines.n, r.sp.cols[r.kernel], "no kernel name")
		}
		r.sp.fields[r.kernel] = name
		return r.launch(l, line)
	}
}

func (r *Reader) launch(l *Launch, line []byte) error {
	h, f, cols := &r.h, r.sp.fields, r.sp.cols
	*l = Launch{Line: r.lines.n, Index: r.index, ID: -1, Process: -1, Context: -1, Stream: -1, Values: l.Values[:0], Kernel: l.Kernel, Device: l.Device, CC: l.CC}
	var err error
	intAt := func(i int, what string) int64 {
		if i < 0 || err != nil {
			return -1
		}
		s := strings.TrimSpace(string(f[i]))
		if s == "" || s == "n/a" {
			return -1
		}
		v, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = r.errorf(r.lines.n, cols[i], "%s %q is not a whole number", what, f[i])
		}
		return v
	}
	l.ID = intAt(r.id, h.Columns[max(r.id, 0)])
	l.Context = intAt(r.ctx, "Context")
	l.Stream = intAt(r.stream, "Stream")
	if err != nil {
		return err
	}
	name := f[r.kernel]
	if string(name) != l.Kernel { // most rows repeat the kernel before them
		l.Kernel = string(name)
	}
	dev := r.dev
	if r.devName >= 0 && len(f[r.devName]) > 0 {
		dev = r.devName
	}
	if dev >= 0 && string(f[dev]) != r.lastDev {
		r.lastDev = string(f[dev])
		r.lastDevName = deviceName(r.lastDev)
	}
	l.Device = r.lastDevName
	if r.cc >= 0 && string(f[r.cc]) != l.CC {
		l.CC = string(f[r.cc])
	}
	for i := range f {
		v := Absent
		if !h.Identity[i] {
			var ownUnit bool
			v, ownUnit, err = parseValue(f[i])
			if errors.Is(err, errText) {
				r.noteText(i, f[i])
				v, err = Absent, nil
			} else if err != nil {
				return r.errorf(r.lines.n, cols[i], "%s: %v", h.Columns[i], err)
			}
			if !ownUnit {
				v *= r.factor[i] // a bare number is in the column's unit
			}
		}
		l.Values = append(l.Values, v)
	}
	l.Process = intAt(r.pid, "Process ID")
	if err != nil {
		return err
	}
	if err := r.checkOrder(l, l.Process, cols); err != nil {
		return err
	}
	r.index++
	return nil
}

// checkOrder refuses rows out of launch order (sorted by another column,
// or files pasted together), which matching by order would pair wrong.
func (r *Reader) checkOrder(l *Launch, pid int64, cols []int) error {
	if l.ID >= 0 {
		k := [2]int64{pid, l.Context}
		if last, ok := r.lastID[k]; ok && l.ID <= last {
			return r.errorf(l.Line, cols[r.id], "%s %d after %d (line %d): rows are not in launch order (sorted by another column?); export them as the profiler wrote them", r.h.Columns[r.id], l.ID, last, r.lastIDLine[k])
		}
		r.lastID[k], r.lastIDLine[k] = l.ID, l.Line
	}
	if r.start >= 0 {
		s := l.Values[r.start]
		if s < r.lastStart {
			return r.errorf(l.Line, cols[r.start], "Start %g before the row above's: rows are not in launch order (sorted by another column?)", s)
		}
		if s == s {
			r.lastStart = s
		}
	}
	return nil
}

var devIndex = regexp.MustCompile(` \(\d+\)$`)

// deviceName drops the " (0)" nvprof puts after a GPU's name.
func deviceName(s string) string { return devIndex.ReplaceAllString(s, "") }

func (r *Reader) noteText(col int, v []byte) {
	if r.text == nil {
		r.text = make([]textNote, len(r.h.Columns))
	}
	if r.text[col].n == 0 {
		r.text[col] = textNote{line: r.lines.n, value: string(v)}
	}
	r.text[col].n++
}

// Notes says which metric columns held text rather than numbers (taken
// as absent): how many values, and the first one's line.
func (r *Reader) Notes() []string {
	var out []string
	for i, t := range r.text {
		if t.n > 0 {
			out = append(out, fmt.Sprintf("%s: %d values are not numbers, taken as absent (the first %q, line %d)", r.h.Columns[i], t.n, t.value, t.line))
		}
	}
	return out
}
