package tracedir

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxStatsLine bounds a stats row's line: mangled names can be long, but
// not this long.
const maxStatsLine = 16 << 20

// statsLayout is where a stats file's rows hold the tracer's columns, as
// its header names them: forks of the tracer add columns (a trailing
// "latency"; "device_id" and "stream_id" first).
type statsLayout struct {
	at    []int // each of statsColumns' field in a row; nil: statsColumns' order
	width int   // a row's fields
	cols  []string
}

// readHeader reads a stats file's first line, fields, as its header when
// it is one: its first field is no kernel id and it names a column of the
// tracer's. ok is false for a row. A header that names all the tracer's
// columns gives their places (other columns are ignored: extra names
// them); one that lacks some is an error naming them.
func readHeader(fields []string) (l statsLayout, extra []string, ok bool, err error) {
	if _, _, row := rowTraceFile(fields[0]); row || !slices.ContainsFunc(fields, func(f string) bool { return slices.Contains(statsColumns, f) }) {
		return statsLayout{width: len(statsColumns)}, nil, false, nil
	}
	l = statsLayout{at: make([]int, len(statsColumns)), width: len(fields)}
	var missing []string
	for i, c := range statsColumns {
		if l.at[i] = slices.Index(fields, c); l.at[i] < 0 {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return l, nil, true, fmt.Errorf("the header lacks the tracer's column%s %s (want %s; others may follow): no row of the file is read",
			plural(len(missing)), quoteAll(missing), quoteAll(statsColumns))
	}
	for i, f := range fields {
		if !slices.Contains(l.at, i) {
			extra = append(extra, f)
		}
	}
	if len(extra) == 0 && slices.IsSorted(l.at) {
		l.at = nil // the tracer's own
	}
	return l, extra, true, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// row returns a row's fields in statsColumns' order, or why it has none.
func (l *statsLayout) row(fields []string, header bool) ([]string, error) {
	if len(fields) != l.width {
		if header && l.width != len(statsColumns) {
			return nil, fmt.Errorf("want %d columns, as the header (line 1) names, got %d", l.width, len(fields))
		}
		return nil, fmt.Errorf("want %d columns, got %d", l.width, len(fields))
	}
	if l.at == nil {
		return fields, nil
	}
	l.cols = l.cols[:0]
	for _, i := range l.at {
		l.cols = append(l.cols, fields[i])
	}
	return l.cols, nil
}

// eachRow calls fn with each row of a stats file but its header and blank
// lines: its line number and the tracer's columns, trimmed, in
// statsColumns' order and in a slice fn must not keep, or why the row
// cannot be read (bad: its number of columns, or a header that lacks some
// of the tracer's, which fn is given once, as line 1, and no row after
// it). Columns a header names that are not the tracer's are ignored, in
// a warning in w; a line over maxStatsLine is skipped, in a warning in w;
// w may be nil.
func eachRow(r io.Reader, rel string, w *Warnings, fn func(line int, cols []string, bad error) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	var buf []byte
	var cols []string // reused: a row's fields, substrings of its line
	layout, header := statsLayout{width: len(statsColumns)}, false
	for {
		buf = buf[:0]
		long, eof := false, false
		for {
			chunk, err := br.ReadSlice('\n')
			if !long && len(buf)+len(chunk) > maxStatsLine+1 { // +1: its newline
				long, buf = true, buf[:0]
			}
			if !long {
				buf = append(buf, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return fmt.Errorf("%s:%d: %w", rel, line+1, err)
			}
			break
		}
		if eof && len(buf) == 0 && !long {
			return nil
		}
		line++
		if long {
			if w != nil {
				w.Addf("%s:%d: the line is over %d MiB, longer than any stats row; skipped", rel, line, maxStatsLine>>20)
			}
			if eof {
				return nil
			}
			continue
		}
		text := strings.TrimSpace(string(buf))
		if text == "" {
			if eof {
				return nil
			}
			continue
		}
		cols = cols[:0]
		for f := range strings.SplitSeq(text, ",") {
			cols = append(cols, strings.TrimSpace(f))
		}
		if line == 1 {
			l, extra, ok, err := readHeader(cols)
			if err != nil {
				return fn(line, nil, err)
			}
			if ok {
				layout, header = l, true
				if len(extra) > 0 && w != nil {
					w.Addf("%s:%d: the header names column%s %s besides the tracer's: ignored", rel, line, plural(len(extra)), quoteAll(extra))
				}
				if eof {
					return nil
				}
				continue
			}
		}
		row, bad := layout.row(cols, header)
		if err := fn(line, row, bad); err != nil {
			return err
		}
		if eof {
			return nil
		}
	}
}

// StatsRow is what [EachStatsRow] reads of a stats row.
type StatsRow struct {
	TraceFile  string // its kernel trace's file name, as Kernel.TraceFile
	Name       string // kernel mangled name; "" when empty
	Grid       [3]int // grid_dimX, grid_dimY, grid_dimZ, when GridOK
	GridOK     bool   // the grid columns read as non-negative integers
	Reported   uint32 // total_reported_insts, when ReportedOK: the instruction lines the tracer says it wrote
	ReportedOK bool   // total_reported_insts reads as a 32-bit count
}

// EachStatsRow reads the stats file at path and calls fn with each row
// that has every column and names a kernel trace, with what else of it
// reads. Other rows are skipped (ReadKernels reports them); an unreadable
// file is an error.
func EachStatsRow(path string, fn func(StatsRow)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachRow(f, filepath.Base(path), nil, func(_ int, cols []string, bad error) error {
		if bad != nil {
			return nil
		}
		file, _, ok := rowTraceFile(cols[0])
		if !ok {
			return nil
		}
		r := StatsRow{TraceFile: file, Name: cols[1], GridOK: true}
		for i := range r.Grid {
			v, err := strconv.Atoi(cols[2+i])
			if err != nil || v < 0 {
				r.GridOK = false
				break
			}
			r.Grid[i] = v
		}
		r.Reported, r.ReportedOK = count32(cols[11])
		fn(r)
		return nil
	})
}

// rowTraceFile reads a stats row's kernel id column: a kernel trace's
// file name, or an id, whose file is then kernel-<id>.trace.
func rowTraceFile(col string) (file string, id int, ok bool) {
	s := col
	if n := traceFileID(col); n != "" {
		file, s = col, n
	}
	id, err := strconv.Atoi(s)
	if err != nil || id < 0 {
		return "", 0, false
	}
	if file == "" {
		file = fmt.Sprintf("kernel-%d.trace", id)
	}
	return file, id, true
}

// count32 reads an instruction count of a stats row. The tracer prints
// 32-bit unsigned counts with %d: a count past 2^31 comes out negative,
// so it is read back as uint32.
func count32(s string) (uint32, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < -(1<<31) || v >= 1<<32 {
		return 0, false
	}
	return uint32(v), true
}
