package tracedir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

	// unkeyed counts the entries (in Bad too) without an integer kernel_id.
	unkeyed int
}

// Usable reports whether the file is real timing at all (formats.md §7):
// a non-empty list of rows, each with an integer kernel_id. Rows with an
// id that break another rule (a duration_ns of 0) are skipped, in Bad,
// but do not make the file unusable. It is the rule behind a trace's
// hasRealTiming.
func (rt RealTiming) Usable() bool { return len(rt.Rows)+len(rt.Bad) > 0 && rt.unkeyed == 0 }

// ReadRealTiming reads and parses a real_timing.json file.
func ReadRealTiming(path string) (RealTiming, error) {
	return readTimingFile(path, "real timing", ParseRealTiming)
}

// readTimingFile reads the timing file at path with parse; its errors
// name what was read ("read real timing: ...") or the file.
func readTimingFile[T any](path, what string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ParseRealTiming parses real_timing.json (formats.md §7): a list of rows or
// an object whose "rows" is that list. A row needs an integer kernel_id; it
// may have kernel_name, context (strings), duration_ns (a number > 0),
// cycles and invocation (integers >= 0). A row that breaks these rules is
// reported in Bad and skipped; only a file that is not such a list is an
// error.
func ParseRealTiming(data []byte) (RealTiming, error) {
	rows, prefix, err := jsonTopList(data, "rows")
	if err != nil {
		return RealTiming{}, err
	}
	var rt RealTiming
	for i, raw := range rows {
		row, keyed, reason := parseTimingRow(raw)
		if !keyed {
			rt.unkeyed++
		}
		if reason != "" {
			rt.Bad = append(rt.Bad, BadEntry{Index: i, Path: fmt.Sprintf("%s[%d]", prefix, i), Reason: reason, unkeyed: !keyed})
			continue
		}
		rt.Rows = append(rt.Rows, row)
	}
	return rt, nil
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
	b, err := os.ReadFile(filepath.Join(t.Root, filepath.FromSlash(rel)))
	if err != nil {
		return false, fmt.Sprintf("%s: not read: %v; %s", name, err, none)
	}
	rt, err := ParseRealTiming(b)
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s: %v: want a list of rows with integer kernel_ids (or an object whose \"rows\" is one); %s", name, err, none)
	case rt.Usable():
		return true, ""
	case rt.unkeyed == 0:
		return false, fmt.Sprintf("%s: no rows; %s", name, none)
	}
	var first BadEntry
	for _, bad := range rt.Bad {
		if bad.unkeyed {
			first = bad
			break
		}
	}
	more := ""
	if rt.unkeyed > 1 {
		more = fmt.Sprintf(" (and %d more rows without one)", rt.unkeyed-1)
	}
	line, _ := LineCol(b, listEntryOffset(b, "rows", first.Index)+1)
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
