package tracedir_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/tracedir"
)

func TestParseRealTiming(t *testing.T) {
	tests := []struct {
		name string
		json string
		rows []int // kernel ids of the good rows
		bad  []string
		err  string
	}{
		{name: "list", json: `[{"kernel_id": 1, "duration_ns": 10.5}, {"kernel_id": 2}]`, rows: []int{1, 2}},
		{name: "object with rows", json: `{"gpu": "H100", "rows": [{"kernel_id": 3, "context": "0x1", "cycles": 100, "invocation": 0}]}`, rows: []int{3}},
		{name: "nulls are absent", json: `[{"kernel_id": 1, "kernel_name": null, "duration_ns": null}]`, rows: []int{1}},
		{name: "bad rows skipped", json: `[
			{"kernel_id": 1, "duration_ns": 5},
			{"kernel_name": "_Z3fooPf", "duration_ns": 5},
			{"kernel_id": "2", "duration_ns": 5},
			{"kernel_id": 2.5},
			{"kernel_id": 4, "duration_ns": "fast"},
			{"kernel_id": 5, "duration_ns": 0},
			{"kernel_id": 6, "cycles": -1},
			{"kernel_id": 7, "context": 12},
			7,
			{"kernel_id": 8, "invocation": 1.5}
		]`, rows: []int{1}, bad: []string{
			"[1]: kernel_id: missing",
			"[2]: kernel_id: want an integer, got a string",
			"[3]: kernel_id: want an integer, got 2.5",
			"[4]: duration_ns: want a number, got a string",
			"[5]: duration_ns: must be > 0",
			"[6]: cycles: must be >= 0",
			"[7]: context: want a string, got 12",
			"[8]: want an object",
			"[9]: invocation: want an integer, got 1.5",
		}},
		{name: "bad row inside rows", json: `{"rows": [{"kernel_id": true}]}`, bad: []string{"rows[0]: kernel_id: want an integer, got a boolean"}},
		{name: "not json", json: `kernel_id,duration_ns`, err: "not JSON"},
		{name: "empty", json: ``, err: "not JSON"},
		{name: "object without rows", json: `{"kernels": []}`, err: `an object without "rows"`},
		{name: "rows not a list", json: `{"rows": {}}`, err: "rows: want a list"},
		{name: "a number", json: `42`, err: "want a list or an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := tracedir.ParseRealTiming([]byte(tt.json))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []int
			for _, r := range rt.Rows {
				ids = append(ids, r.KernelID)
			}
			var bad []string
			for _, b := range rt.Bad {
				bad = append(bad, b.String())
			}
			if !slices.Equal(ids, tt.rows) || !slices.Equal(bad, tt.bad) {
				t.Errorf("rows %v, bad %q; want %v, %q", ids, bad, tt.rows, tt.bad)
			}
		})
	}
}

func TestParseRealTimingFields(t *testing.T) {
	rt, err := tracedir.ParseRealTiming([]byte(`[{"kernel_id": 3, "kernel_name": "_Z3fooPf", "context": "0x6165BDD7EC90",
		"duration_ns": 1523.5, "cycles": 2673, "invocation": 2}]`))
	if err != nil || len(rt.Rows) != 1 {
		t.Fatalf("%+v, %v", rt, err)
	}
	r := rt.Rows[0]
	if r.KernelID != 3 || r.KernelName != "_Z3fooPf" || r.Context != "0x6165bdd7ec90" ||
		*r.DurationNs != 1523.5 || *r.Cycles != 2673 || *r.Invocation != 2 {
		t.Errorf("row = %+v", r)
	}
}

func TestReadRealTiming(t *testing.T) {
	path := filepath.Join(t.TempDir(), "real_timing.json")
	os.WriteFile(path, []byte(`[{"kernel_id": 1, "duration_ns": 5}]`), 0o644)
	if rt, err := tracedir.ReadRealTiming(path); err != nil || len(rt.Rows) != 1 {
		t.Errorf("%+v, %v", rt, err)
	}
	os.WriteFile(path, []byte(`{`), 0o644)
	if _, err := tracedir.ReadRealTiming(path); err == nil || !strings.Contains(err.Error(), "real_timing.json: not JSON") {
		t.Errorf("err = %v", err)
	}
}

// TestHasRealTiming: a trace has real timing exactly when the file parses
// as the runs' comparison reads it and every row has an integer
// kernel_id (formats.md §7); rows with an id but another bad field are
// skipped by the comparison and do not unset the flag.
func TestHasRealTiming(t *testing.T) {
	tests := []struct {
		name string
		json string
		want bool
	}{
		{"rows", `[{"kernel_id": 1, "duration_ns": 10}]`, true},
		{"object with rows", `{"gpu": "H100", "rows": [{"kernel_id": 1}]}`, true},
		{"a row with a bad duration", `[{"kernel_id": 1, "duration_ns": 10}, {"kernel_id": 2, "duration_ns": 0}]`, true},
		{"a row with a bad context", `[{"kernel_id": 1, "context": 7}]`, true},
		{"empty list", `[]`, false},
		{"empty rows", `{"rows": []}`, false},
		{"a row without kernel_id", `[{"kernel_id": 1}, {"duration_ns": 10}]`, false},
		{"a null kernel_id", `[{"kernel_id": null, "duration_ns": 10}]`, false},
		{"a string kernel_id", `[{"kernel_id": "1"}]`, false},
		{"a fractional kernel_id", `[{"kernel_id": 1.5}]`, false},
		{"a row that is no object", `[{"kernel_id": 1}, 7]`, false},
		{"object without rows", `{"Rows": [{"kernel_id": 1}]}`, false},
		{"not JSON", `kernel_id,duration_ns`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tracedir.RealTimingFile), []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			tree, err := tracedir.Walk(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := tree.HasRealTiming(tracedir.Metadata{}); got != tt.want {
				t.Errorf("HasRealTiming = %v, want %v", got, tt.want)
			}
			rt, err := tracedir.ParseRealTiming([]byte(tt.json))
			if got := err == nil && rt.Usable(); got != tt.want {
				t.Errorf("ParseRealTiming: usable %v (err %v), want %v", got, err, tt.want)
			}
		})
	}

	t.Run("file named in metadata", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "timing"), 0o755)
		os.WriteFile(filepath.Join(dir, "timing", "t.json"), []byte(`[{"kernel_id": 1}]`), 0o644)
		tree, err := tracedir.Walk(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !tree.HasRealTiming(tracedir.Metadata{RealTiming: "timing/t.json"}) || tree.HasRealTiming(tracedir.Metadata{}) {
			t.Error("HasRealTiming does not follow metadata's real_timing")
		}
	})
}

// TestRealTimingWarnings: a real-timing file meant but unusable gives a
// warning naming the file and the line or field; none at all, when
// metadata.json names none, gives none.
func TestRealTimingWarnings(t *testing.T) {
	for _, tt := range []struct {
		name     string
		files    map[string]string
		named    string // metadata.json's real_timing
		want     bool
		contains []string // "": no warning
	}{
		{name: "no file", want: false},
		{name: "good", files: map[string]string{"real_timing.json": `[{"kernel_id": 1}]`}, want: true},
		{name: "not JSON", files: map[string]string{"real_timing.json": "[\n{\"kernel_id\": 1},\n oops]"}, contains: []string{"real_timing.json: not JSON: line 3, column 2", "kernel_id"}},
		{name: "string kernel_id", files: map[string]string{"real_timing.json": "[\n  {\"kernel_id\": 1},\n  {\"kernel_id\": \"1\"},\n  {\"kernel_id\": \"2\"}\n]"},
			contains: []string{`real_timing.json:3: [1]: kernel_id: want an integer, got a string (and 1 more rows without one)`}},
		{name: "string kernel_id in rows", files: map[string]string{"t/rt.json": "{\"gpu\": \"H100\",\n \"rows\": [\n{\"kernel_id\": \"1\"}]}"}, named: "t/rt.json",
			contains: []string{`t/rt.json:3: rows[0]: kernel_id: want an integer, got a string`}},
		{name: "empty", files: map[string]string{"real_timing.json": `[]`}, contains: []string{"real_timing.json: no rows"}},
		{name: "named file missing", named: "nothere.json", files: map[string]string{"real_timing.json": `[{"kernel_id": 1}]`},
			contains: []string{`metadata.json: real_timing: "nothere.json" is not in the trace`}},
		{name: "named outside: metadata.json's warning", named: "../x.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range tt.files {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), []byte(c))
			}
			tree, err := tracedir.Walk(dir)
			if err != nil {
				t.Fatal(err)
			}
			has, w := tree.RealTimingOf(tracedir.Metadata{RealTiming: tt.named})
			if has != tt.want {
				t.Errorf("has %v, want %v", has, tt.want)
			}
			if len(tt.contains) == 0 && w != "" {
				t.Errorf("warning %q, want none", w)
			}
			for _, s := range tt.contains {
				if !strings.Contains(w, s) || !strings.Contains(w, "hasRealTiming is false") {
					t.Errorf("warning %q, want it to say %q and hasRealTiming is false", w, s)
				}
			}
		})
	}
}

// TestTimingFilesTakeABOM: a timing file saved by a Windows editor starts
// with a UTF-8 byte order mark, which metadata.json may too (TrimBOM);
// every timing file reads as without it, and an error's line and column
// are counted after it.
func TestTimingFilesTakeABOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(bom+text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rtPath := write(tracedir.RealTimingFile, `[{"kernel_id": 1, "duration_ns": 10}]`)
	tlPath := write(tracedir.TimelineFile, `{"steps": [{"step": 0, "start_ns": 0, "end_ns": 10, "events": []}]}`)
	kmPath := write(tracedir.KernelMappingFile, `[{"step": 0, "event": 0, "kernel_id": 1}]`)
	tree, err := tracedir.Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	if has, warning := tree.RealTimingOf(tracedir.Metadata{}); !has || warning != "" {
		t.Errorf("RealTimingOf = %v, %q", has, warning)
	}
	if rt, err := tracedir.ReadRealTiming(rtPath); err != nil || len(rt.Rows) != 1 {
		t.Errorf("ReadRealTiming = %+v, %v", rt, err)
	}
	if tl, err := tracedir.ReadTimeline(tlPath); err != nil || len(tl.Steps) != 1 {
		t.Errorf("ReadTimeline = %+v, %v", tl, err)
	}
	if km, err := tracedir.ReadKernelMapping(kmPath); err != nil || len(km.Entries) != 1 {
		t.Errorf("ReadKernelMapping = %+v, %v", km, err)
	}
	write(tracedir.RealTimingFile, "[\n{\"kernel_id\": x}]")
	if _, err := tracedir.ReadRealTiming(rtPath); err == nil || !strings.Contains(err.Error(), "not JSON: line 2, column 15") {
		t.Errorf("err = %v, want line 2, column 15", err)
	}
}

// TestRealTimingOfReadsAFileOncePerChange: the scanner asks on every
// walk, so a file is read again only when its size or time changed (a
// real_timing.json of millions of rows takes seconds to read).
func TestRealTimingOfReadsAFileOncePerChange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, tracedir.RealTimingFile)
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(text string, at time.Time) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	has := func() bool {
		tree, err := tracedir.Walk(dir)
		if err != nil {
			t.Fatal(err)
		}
		return tree.HasRealTiming(tracedir.Metadata{})
	}
	write(`[{"kernel_id": 1}]`, at)
	if !has() {
		t.Fatal("no real timing")
	}
	write(`[{"kernel_xx": 1}]`, at) // same size and time: not read again
	if !has() {
		t.Error("an unchanged file was read again")
	}
	write(`[{"kernel_xx": 1}]`, at.Add(time.Second))
	if has() {
		t.Error("a changed file was not read again")
	}
}
