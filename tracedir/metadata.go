package tracedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// MetadataFile is the name of a trace's metadata file.
const MetadataFile = "metadata.json"

// Metadata is what Cascade reads of metadata.json. Pointers are nil where
// the file has no such field.
type Metadata struct {
	RunName            string
	Model              *string
	Layers             *string // as given: a string, or a list printed as "[0, 1]"
	Prompts            []string
	GPU                *string
	TraceGPUArch       *string
	SuggestedSimConfig *string
	Status             string
	Error              string
	// ErrorRaw is the error field's JSON, compacted and cut short, when it
	// is no string (Error is then ""); "" otherwise.
	ErrorRaw   string
	RealTiming string
	// Profiles are the hardware profiles of the traced program (Nsight
	// Compute raw pages, nvprof GPU traces: formats.md §9), paths in the
	// trace directory: "profiles", a name or a list of names.
	Profiles []string
	Files    []FileEntry
	HasFiles bool // the file has a files list (possibly empty)
	// Warnings name the fields whose values are of a shape Cascade takes
	// but does not expect, and what it expected: they never fail a trace.
	Warnings []string
}

// FileEntry is one entry of metadata.json's files list.
type FileEntry struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// MaxMetadataBytes caps the size of a metadata.json that is read: a
// trace's metadata (model, layers, prompts, files list) fits in far less,
// and one read whole costs the server its size in memory on every scan.
// A bigger one fails the trace (MetadataTooBigError) without being read.
const MaxMetadataBytes = 32 << 20

// MetadataTooBigError is a metadata.json over MaxMetadataBytes.
type MetadataTooBigError struct {
	Size int64 // its size in bytes; at least MaxMetadataBytes+1
}

func (e *MetadataTooBigError) Error() string {
	return fmt.Sprintf("%s: %d bytes (%.1f MiB) is over the limit of %d MiB that is read: metadata.json holds a trace's metadata (model, layers, prompts, files list); upload a smaller one",
		MetadataFile, e.Size, float64(e.Size)/(1<<20), MaxMetadataBytes>>20)
}

// ReadMetadataBytes reads dir/metadata.json, refusing one over
// MaxMetadataBytes (*MetadataTooBigError) without reading it whole.
func ReadMetadataBytes(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxMetadataBytes {
		return nil, &MetadataTooBigError{Size: fi.Size()}
	}
	// It may grow while read, or be no regular file: read one byte past
	// the limit at most.
	b, err := io.ReadAll(io.LimitReader(f, MaxMetadataBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMetadataBytes {
		return nil, &MetadataTooBigError{Size: int64(len(b))}
	}
	return b, nil
}

// ReadMetadata reads and decodes dir/metadata.json. A syntax error names
// the line and column; a field of the wrong type names the field; one
// over MaxMetadataBytes is not read.
func ReadMetadata(dir string) (Metadata, error) {
	b, err := ReadMetadataBytes(dir)
	if err != nil {
		return Metadata{}, err
	}
	return ParseMetadata(b)
}

// TrimBOM returns the bytes of a metadata.json without the UTF-8 byte
// order mark it may start with (Windows editors write one), which is not
// JSON, nor data. Every reader of the file (ParseMetadata, cascade
// upload) takes it off first, so they accept the same files and place an
// error at the same line and column.
func TrimBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
}

// ParseMetadata decodes the bytes of a metadata.json.
func ParseMetadata(b []byte) (Metadata, error) {
	var m Metadata
	b = TrimBOM(b)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return m, fmt.Errorf("%s: %s", MetadataFile, describeJSONError(b, err))
	}
	if raw == nil {
		return m, fmt.Errorf("%s: want a JSON object, got null", MetadataFile)
	}
	field := func(name string, dst any) error {
		v, ok := raw[name]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s: %s: %s", MetadataFile, name, typeError(err))
		}
		return nil
	}
	str := func(name string) (*string, error) {
		var s *string
		return s, field(name, &s)
	}
	var errs []error
	var err error
	if m.Model, err = str("model"); err != nil {
		errs = append(errs, err)
	}
	if m.GPU, err = str("gpu"); err != nil {
		errs = append(errs, err)
	}
	if m.TraceGPUArch, err = str("trace_gpu_arch"); err != nil {
		errs = append(errs, err)
	}
	if m.SuggestedSimConfig, err = str("suggested_sim_config"); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs,
		field("run_name", &m.RunName),
		field("status", &m.Status),
		field("real_timing", &m.RealTiming))
	if v, ok := raw["error"]; ok && string(v) != "null" && json.Unmarshal(v, &m.Error) != nil {
		// Read only with status "failed": the profiler's verdict stands
		// whatever its error text's shape (FailedText).
		m.ErrorRaw = compactN(v, 200)
		if !m.Failed() {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: error: want a string, got %s; ignored, as status is not \"failed\"", MetadataFile, m.ErrorRaw))
		}
	}
	if st := strings.ToLower(strings.TrimSpace(m.Status)); m.Status != "" && !slices.Contains(KnownStatuses, st) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%s: status: %q is none Cascade knows (want \"failed\", which fails the trace, \"complete\" or \"uploading\"); the trace is taken as not failed", MetadataFile, m.Status))
	}
	if v, ok := raw["layers"]; ok && string(v) != "null" {
		m.Layers, err = layersText(v)
		errs = append(errs, err)
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: layers: want a list of layer numbers such as [0, 1, 2, 3], got the string %s; shown as given", MetadataFile, compact(v)))
		}
	}
	if a := m.TraceGPUArch; a != nil && *a != "" && !archRe.MatchString(*a) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%s: trace_gpu_arch: want an architecture such as \"sm_90\", got %q; the kernel traces' binary version is used instead", MetadataFile, *a))
		m.TraceGPUArch = nil
	}
	if rt := m.RealTiming; rt != "" && (filepath.IsAbs(rt) || slices.Contains(strings.Split(filepath.ToSlash(rt), "/"), "..")) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%s: real_timing: %q is outside the trace; measured times are read from a file in it only (%s by default), so none are", MetadataFile, rt, RealTimingFile))
	}
	if c := m.SuggestedSimConfig; c != nil && (strings.TrimSpace(*c) == "" || strings.ContainsAny(*c, " \t/")) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%s: suggested_sim_config: want the name of a tested config such as \"SM90_H100\", got %q; the New run screen preselects the first compatible config instead", MetadataFile, *c))
	}
	if v, ok := raw["prompts"]; ok && string(v) != "null" {
		var one string
		if json.Unmarshal(v, &one) == nil {
			m.Prompts = []string{one}
		} else {
			errs = append(errs, field("prompts", &m.Prompts))
		}
	}
	if v, ok := raw["profiles"]; ok && string(v) != "null" {
		m.Profiles, m.Warnings = parseProfiles(v, m.Warnings)
	}
	if v, ok := raw["files"]; ok && string(v) != "null" {
		m.HasFiles = true
		errs = append(errs, parseFiles(v, &m.Files))
	}
	return m, errors.Join(errs...)
}

// parseProfiles reads metadata.json's profiles, a name or a list of
// names: what fails nothing, as a bad profile fails nothing, is a warning
// (appended to warnings) naming the entry: one that is no name is left
// out, the others used; a name repeated (the same path once cleaned) is
// read once, as a profile read twice would weigh twice in every mean.
func parseProfiles(v json.RawMessage, warnings []string) ([]string, []string) {
	var one string
	if json.Unmarshal(v, &one) == nil {
		return []string{one}, warnings
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(v, &entries); err != nil {
		return nil, append(warnings, fmt.Sprintf("%s: profiles: want a profile's path or a list of them, got %s; no profile is read", MetadataFile, compactN(v, 200)))
	}
	var names []string
	first := map[string]int{} // cleaned path → its entry
	for i, e := range entries {
		var name string
		if err := json.Unmarshal(e, &name); err != nil || strings.TrimSpace(name) == "" {
			warnings = append(warnings, fmt.Sprintf("%s: profiles[%d]: want a profile's path, got %s; left out, the others read", MetadataFile, i, compactN(e, 200)))
			continue
		}
		clean := path.Clean(filepath.ToSlash(name))
		if j, seen := first[clean]; seen {
			warnings = append(warnings, fmt.Sprintf("%s: profiles[%d]: %q names the profile of profiles[%d] again; read once", MetadataFile, i, name, j))
			continue
		}
		first[clean] = i
		names = append(names, name)
	}
	return names, warnings
}

// KnownStatuses are the values of metadata.json's status Cascade knows,
// in any case: "failed" fails the trace (Failed), the others say nothing.
// Any other is a warning.
var KnownStatuses = []string{"failed", "complete", "uploading"}

// Failed reports whether metadata.json's status says the trace failed:
// "failed" in any case, as a profiler writing FAILED means it.
func (m Metadata) Failed() bool { return strings.EqualFold(strings.TrimSpace(m.Status), "failed") }

// FailedText is the error of a trace whose metadata.json says it failed
// (Failed), naming where it came from and its error text, or saying its
// error field is no string; "" when it does not say so.
func (m Metadata) FailedText() string {
	if !m.Failed() {
		return ""
	}
	msg := fmt.Sprintf("%s: status %q", MetadataFile, m.Status)
	switch {
	case m.Error != "":
		msg += ": " + m.Error
	case m.ErrorRaw != "":
		msg += "; its error field is not a string: " + m.ErrorRaw
	}
	return msg
}

func parseFiles(v json.RawMessage, dst *[]FileEntry) error {
	// One pass for a list that decodes (a thousand traces of 200 files
	// each at start-up); entry by entry, to name the bad one, otherwise.
	var fast []struct {
		Path *string `json:"path"`
		Size *int64  `json:"size"`
	}
	if json.Unmarshal(v, &fast) == nil {
		ok := true
		for _, f := range fast {
			ok = ok && f.Path != nil && f.Size != nil && *f.Size >= 0
		}
		if ok {
			for _, f := range fast {
				*dst = append(*dst, FileEntry{Path: *f.Path, Size: *f.Size})
			}
			return nil
		}
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(v, &entries); err != nil {
		return fmt.Errorf("%s: files: %s", MetadataFile, typeError(err))
	}
	for i, e := range entries {
		var f struct {
			Path *string `json:"path"`
			Size *int64  `json:"size"`
		}
		if err := json.Unmarshal(e, &f); err != nil {
			return fmt.Errorf("%s: files[%d]: %s", MetadataFile, i, typeError(err))
		}
		if f.Path == nil || f.Size == nil {
			return fmt.Errorf("%s: files[%d]: want {\"path\": string, \"size\": integer}, got %s", MetadataFile, i, compact(e))
		}
		if *f.Size < 0 {
			return fmt.Errorf("%s: files[%d]: size: %d is negative", MetadataFile, i, *f.Size)
		}
		*dst = append(*dst, FileEntry{Path: *f.Path, Size: *f.Size})
	}
	return nil
}

// layersText keeps layers as given: a string stays itself, a list of
// integers prints as "[0, 1]", anything else as its compact JSON.
func layersText(v json.RawMessage) (*string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return &s, nil
	}
	var ints []int
	if json.Unmarshal(v, &ints) == nil {
		parts := make([]string, len(ints))
		for i, n := range ints {
			parts[i] = fmt.Sprint(n)
		}
		t := "[" + strings.Join(parts, ", ") + "]"
		return &t, nil
	}
	var n int
	if json.Unmarshal(v, &n) == nil {
		t := fmt.Sprint(n)
		return &t, nil
	}
	return nil, fmt.Errorf("%s: layers: want a list of integers or a string, got %s", MetadataFile, compact(v))
}

func compact(v json.RawMessage) string { return compactN(v, 60) }

// compactN is v's JSON compacted, cut to n bytes at most with "..." at the
// end when longer.
func compactN(v json.RawMessage, n int) string {
	var b bytes.Buffer
	s := string(v)
	if json.Compact(&b, v) == nil {
		s = b.String()
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n-3], "") + "..."
	}
	return s
}

func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want %s, got %s", goKind(te.Type), te.Value)
	}
	return err.Error()
}

// goKind names what a Go type decodes from, as a metadata.json's
// writer knows it: "a list", "a string", never "[]json.RawMessage".
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// archRe is what a trace_gpu_arch looks like: sm_ and a compute
// capability's digits, with a letter suffix for variants (sm_90a).
var archRe = regexp.MustCompile(`^sm_[0-9]+[a-z]*$`)

// describeJSONError turns a decoding error into "line L, column C: msg".
func describeJSONError(b []byte, err error) string {
	var se *json.SyntaxError
	var off int64 = -1
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.Is(err, errors.ErrUnsupported):
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want a JSON object, got %s", te.Value)
	}
	if off < 0 {
		return err.Error()
	}
	line, col := LineCol(b, off)
	return fmt.Sprintf("line %d, column %d: %s", line, col, err.Error())
}

// LineCol returns the 1-based line and column of byte offset off in b.
func LineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off > 0 {
		off-- // encoding/json reports the offset just past the bad byte
	}
	line = 1 + bytes.Count(b[:off], []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}
