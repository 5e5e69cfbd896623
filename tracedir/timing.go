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
	rows, prefix, err := jsonTopList(data, "rows")
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

func parseTimingRow(raw json.RawMessage) (row TimingRow, reason string) {
	f, ok := jsonObject(raw)
	if !ok {
		return row, "want an object"
	}
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

// HasRealTiming reports whether the real-timing file (metadata's
// real_timing, else real_timing.json) holds a non-empty list of rows, each
// with an integer kernel_id, either bare or as an object's "rows".
func (t *Tree) HasRealTiming(m Metadata) bool {
	name := m.RealTiming
	if name == "" {
		name = RealTimingFile
	}
	rel, err := t.Resolve(name)
	if err != nil || !t.Has(rel) || t.Files[rel].Link {
		return false
	}
	b, err := os.ReadFile(filepath.Join(t.Root, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	var rows []map[string]json.RawMessage
	if json.Unmarshal(b, &rows) != nil {
		var obj struct {
			Rows []map[string]json.RawMessage `json:"rows"`
		}
		if json.Unmarshal(b, &obj) != nil {
			return false
		}
		rows = obj.Rows
	}
	for _, r := range rows {
		var id int64
		if json.Unmarshal(r["kernel_id"], &id) != nil {
			return false
		}
	}
	return len(rows) > 0
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
