package tracedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// RealTimingFile is where measured kernel times are when metadata.json
// names no other file.
const RealTimingFile = "real_timing.json"

// BadEntry is one entry of a timing file that was skipped, and why.
type BadEntry struct {
	Index  int    // index of the top-level entry: the row, step or mapping
	Path   string // where in the file: "rows[3]", "steps[0].events[2]", "[4]"
	Reason string // "kernel_id: missing", ...

	unkeyed bool // a real-timing row without an integer kernel_id
}

func (b BadEntry) String() string { return b.Path + ": " + b.Reason }

// TimingRow is one measured kernel time from real_timing.json.
type TimingRow struct {
	Index      int // the row's index in the file's list
	KernelID   int
	KernelName string
	Context    string   // normalized with [kernellist.NormalizeContext]; "" when absent
	DurationNs *float64 // nil when absent
	Cycles     *int64
	Invocation *int
	// Unknown names the row's fields formats.md §7 does not define
	// ("duration_us"), which are ignored; Null the times given as null.
	Unknown, Null []string
}

// RealTimingFields are the fields a real-timing row may have (formats.md §7).
var RealTimingFields = []string{"kernel_id", "kernel_name", "context", "duration_ns", "cycles", "invocation"}

// RealTiming is a parsed real_timing.json: its good rows in file order, and
// the rows it skipped.
type RealTiming struct {
	Rows []TimingRow
	// Bad is the first MaxBad rows skipped; BadRows counts them all.
	Bad     []BadEntry
	BadRows int
	// GoodRows counts the rows kept (Rows, or those a scan passed on).
	GoodRows int
	// Prefix names where the rows sit: "rows", or "" for a bare list.
	Prefix string

	// unkeyed counts the entries (in Bad too) without an integer
	// kernel_id; firstUnkeyed is the first, at byte offset unkeyedAt.
	unkeyed      int
	firstUnkeyed BadEntry
	unkeyedAt    int64
}

// MaxBad bounds the bad entries a timing file's reading keeps, however
// many there are: a file of a million bad rows is reported by its first
// few and their count.
const MaxBad = 100

// RowPath names row i of the list: "rows[3]", or "[3]" for a bare list.
func (rt RealTiming) RowPath(i int) string { return fmt.Sprintf("%s[%d]", rt.Prefix, i) }

// Usable reports whether the file is real timing at all (formats.md §7):
// a non-empty list of rows, each with an integer kernel_id. Rows with an
// id that break another rule (a duration_ns of 0) are skipped, in Bad,
// but do not make the file unusable. It is the rule behind a trace's
// hasRealTiming.
func (rt RealTiming) Usable() bool { return rt.GoodRows+rt.BadRows > 0 && rt.unkeyed == 0 }

// ReadRealTiming reads and parses a real_timing.json file.
func ReadRealTiming(path string) (RealTiming, error) {
	return collectRows(func(fn func(TimingRow)) (RealTiming, error) { return ScanRealTiming(path, fn) })
}

// ParseRealTiming parses real_timing.json (formats.md §7): a list of rows or
// an object whose "rows" is that list. A row needs an integer kernel_id; it
// may have kernel_name, context (strings), duration_ns (a number > 0),
// cycles and invocation (integers >= 0). A row that breaks these rules is
// reported in Bad and skipped; only a file that is not such a list is an
// error. A byte order mark before the JSON is no error.
func ParseRealTiming(data []byte) (RealTiming, error) {
	return collectRows(func(fn func(TimingRow)) (RealTiming, error) {
		return scanRealTiming(bytes.NewReader(data), fn)
	})
}

func collectRows(scan func(func(TimingRow)) (RealTiming, error)) (RealTiming, error) {
	var rows []TimingRow
	rt, err := scan(func(r TimingRow) { rows = append(rows, r) })
	rt.Rows = rows
	return rt, err
}

// ScanRealTiming reads the real-timing file at path as ParseRealTiming
// does, as a stream: fn gets each good row in file order, and the
// RealTiming returned holds no Rows. Only a row is in memory at a time.
func ScanRealTiming(path string, fn func(TimingRow)) (RealTiming, error) {
	return readTimingFile(path, "real timing", func(r io.ReadSeeker) (RealTiming, error) { return scanRealTiming(r, fn) })
}

func scanRealTiming(r io.ReadSeeker, fn func(TimingRow)) (RealTiming, error) {
	var rt RealTiming
	var bad []BadEntry
	prefix, err := streamList(r, "rows", func(i int, off int64, raw json.RawMessage) bool {
		row, keyed, reason := parseTimingRow(raw)
		row.Index = i
		if reason != "" {
			b := BadEntry{Index: i, Reason: reason, unkeyed: !keyed}
			if !keyed && rt.unkeyed == 0 {
				rt.firstUnkeyed, rt.unkeyedAt = b, off
			}
			if !keyed {
				rt.unkeyed++
			}
			if rt.BadRows++; len(bad) < MaxBad {
				bad = append(bad, b)
			}
			return true
		}
		rt.GoodRows++
		fn(row)
		return true
	})
	if err != nil {
		return RealTiming{}, err
	}
	rt.Prefix = prefix
	for i := range bad {
		bad[i].Path = rt.RowPath(bad[i].Index)
	}
	rt.Bad = bad
	rt.firstUnkeyed.Path = rt.RowPath(rt.firstUnkeyed.Index)
	return rt, nil
}

// readTimingFile reads the timing file at path with scan, as a stream;
// its errors name what was read ("read timeline: ...") or the file.
func readTimingFile[T any](path, what string, scan func(io.ReadSeeker) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	v, err := scan(f)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// parseTimingRow reads one row; keyed reports that it has an integer
// kernel_id, reason why it is bad ("" when it is fine).
func parseTimingRow(raw json.RawMessage) (row TimingRow, keyed bool, reason string) {
	f, ok := jsonObject(raw)
	if !ok {
		return row, false, "want an object"
	}
	id, ok, reason := f.int("kernel_id")
	if reason != "" {
		return row, false, reason
	}
	if !ok {
		return row, false, "kernel_id: missing"
	}
	row.KernelID = int(id)
	for _, name := range f.names() {
		if !slices.Contains(RealTimingFields, name) && !slices.Contains(row.Unknown, name) {
			row.Unknown = append(row.Unknown, name)
		}
	}
	for _, name := range []string{"duration_ns", "cycles"} {
		if f.isNull(name) {
			row.Null = append(row.Null, name)
		}
	}
	name, _, reason := f.string("kernel_name")
	if reason != "" {
		return row, true, reason
	}
	ctx, _, reason := f.string("context")
	if reason != "" {
		return row, true, reason
	}
	row.KernelName, row.Context = name, kernellist.NormalizeContext(ctx)

	d, ok, reason := f.number("duration_ns")
	switch {
	case reason != "":
		return row, true, reason
	case ok && !(d.f > 0):
		return row, true, "duration_ns: must be > 0"
	case ok:
		row.DurationNs = &d.f
	}
	c, ok, reason := f.int("cycles")
	switch {
	case reason != "":
		return row, true, reason
	case ok && c < 0:
		return row, true, "cycles: must be >= 0"
	case ok:
		row.Cycles = &c
	}
	n, ok, reason := f.int("invocation")
	switch {
	case reason != "":
		return row, true, reason
	case ok && n < 0:
		return row, true, "invocation: must be >= 0"
	case ok:
		inv := int(n)
		row.Invocation = &inv
	}
	return row, true, ""
}

// HasRealTiming reports whether the trace's real-timing file (metadata's
// real_timing, else real_timing.json; a plain file, not a link) is
// [RealTiming.Usable].
func (t *Tree) HasRealTiming(m Metadata) bool {
	has, _ := t.RealTimingOf(m)
	return has
}

// RealTimingOf is HasRealTiming, with a warning saying why not when a
// real-timing file is meant but unusable: the file metadata.json names is
// not there, or the file (named, or real_timing.json) is a link, cannot
// be read, is not JSON, or holds no rows or rows without an integer
// kernel_id. It names the file and the line or field. No file at all, when
// metadata.json names none, is no problem; a name outside the trace is
// metadata.json's warning (ParseMetadata).
func (t *Tree) RealTimingOf(m Metadata) (has bool, warning string) {
	name := m.RealTiming
	if name == "" {
		name = RealTimingFile
	}
	none := "the trace has no real timing (hasRealTiming is false)"
	rel, err := t.Resolve(name)
	switch {
	case err != nil && m.RealTiming != "" && (filepath.IsAbs(name) || slices.Contains(strings.Split(filepath.ToSlash(name), "/"), "..")):
		return false, "" // ParseMetadata warns
	case err != nil && m.RealTiming != "":
		return false, fmt.Sprintf("%s: real_timing: %v; %s", MetadataFile, err, none)
	case err != nil:
		return false, fmt.Sprintf("%v; %s", err, none)
	case !t.Has(rel) && m.RealTiming != "":
		return false, fmt.Sprintf("%s: real_timing: %q is not in the trace; %s", MetadataFile, m.RealTiming, none)
	case !t.Has(rel):
		return false, ""
	case t.Files[rel].Link:
		return false, fmt.Sprintf("%s: a link, and real timing is read from a plain file only; %s", name, none)
	}
	return checkRealTiming(filepath.Join(t.Root, filepath.FromSlash(rel)), name, none)
}

// checked caches what checkRealTiming found of a file, by its path, size
// and modification time: the scanner asks on every walk of a trace, and
// a real_timing.json of millions of rows takes seconds to read, so it is
// read once per change.
var checked = struct {
	sync.Mutex
	m map[checkKey]checkResult
}{m: map[checkKey]checkResult{}}

type checkKey struct {
	path, name string
	size       int64
	mtime      int64
}

type checkResult struct {
	has     bool
	warning string
}

// maxChecked bounds the cache; a full cache starts afresh.
const maxChecked = 256

// checkRealTiming is RealTimingOf's reading of the file at path, named
// name in warnings, streamed (a row at a time in memory) and cached.
func checkRealTiming(path, name, none string) (bool, string) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Sprintf("%s: not read: %v; %s", name, err, none)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Sprintf("%s: not read: %v; %s", name, err, none)
	}
	key := checkKey{path, name, fi.Size(), fi.ModTime().UnixNano()}
	checked.Lock()
	res, ok := checked.m[key]
	checked.Unlock()
	if ok {
		return res.has, res.warning
	}
	res.has, res.warning = checkRealTimingFile(f, name, none)
	checked.Lock()
	if len(checked.m) >= maxChecked {
		clear(checked.m)
	}
	checked.m[key] = res
	checked.Unlock()
	return res.has, res.warning
}

func checkRealTimingFile(f *os.File, name, none string) (bool, string) {
	rt, err := scanRealTiming(f, func(TimingRow) {})
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s: %v: want a list of rows with integer kernel_ids (or an object whose \"rows\" is one); %s", name, err, none)
	case rt.Usable():
		return true, ""
	case rt.unkeyed == 0:
		return false, fmt.Sprintf("%s: no rows; %s", name, none)
	}
	first := rt.firstUnkeyed
	more := ""
	if rt.unkeyed > 1 {
		more = fmt.Sprintf(" (and %d more rows without one)", rt.unkeyed-1)
	}
	line := lineAt(f, rt.unkeyedAt)
	return false, fmt.Sprintf("%s:%d: %s: %s%s: every row needs an integer kernel_id; %s", name, line, first.Path, first.Reason, more, none)
}

// RealTimingPath returns the path of the trace's real-timing file: the one
// metadata.json names in real_timing, else real_timing.json. A name that
// leaves the trace directory, directly or through a link, is an error.
func RealTimingPath(dir string) (string, error) {
	name := RealTimingFile
	if m, err := ReadMetadata(dir); err == nil && m.RealTiming != "" {
		name = m.RealTiming
	}
	if filepath.IsAbs(name) || slices.Contains(strings.Split(filepath.ToSlash(name), "/"), "..") {
		return "", fmt.Errorf("real_timing %q: %w", name, ErrOutside)
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("real_timing %q: %w", name, ErrOutside)
	}
	return p, nil
}
