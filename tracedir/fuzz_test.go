package tracedir

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// jsonPosition is how a JSON syntax error names where it is.
var jsonPosition = regexp.MustCompile(`line \d+, column \d+`)

// FuzzParseMetadata: nothing a metadata.json holds may panic the parser;
// every error names the file, a syntax error its line and column, and
// what parses has no negative file size.
func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{
		`{"model": "m", "layers": [0, 1], "prompts": "p", "files": [{"path": "a", "size": 1}]}`,
		`{"layers": "0-3", "files": [{"path": null}], "status": 3}`,
		`[1, 2]`, `null`, `{`, ``, `{"files": {"a": 1}}`, `{"layers": 1.5}`,
		"{\n  \"model\": \"m\",\n  \"gpu\": x\n}",
		`{"trace_gpu_arch": "sm_90", "suggested_sim_config": "SM90_H100", "real_timing": "t.json", "prompts": ["a", "b"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMetadata(b)
		if err != nil {
			msg := err.Error()
			for _, line := range strings.Split(msg, "\n") {
				if !strings.HasPrefix(line, MetadataFile+": ") {
					t.Fatalf("error line %q does not name %s", line, MetadataFile)
				}
			}
			if !json.Valid(b) && !jsonPosition.MatchString(msg) {
				t.Fatalf("syntax error %q names no line and column", msg)
			}
			return
		}
		for _, f := range m.Files {
			if f.Size < 0 {
				t.Fatalf("accepted a negative size from %q", b)
			}
		}
	})
}

// FuzzStatsRows: malformed stats rows are warnings naming the file and
// line, never a panic, each line at most one kernel and one warning; a
// row that parses, written back as a stats row, parses to the same
// kernel.
func FuzzStatsRows(f *testing.F) {
	f.Add("kernel-1-ctx_0x1.trace.xz, _Z3fooi, 98, 1, 1, 98, 1024, 1, 1, 1024, 50066,50066")
	f.Add("kernel-2.trace, x, -1, 1, 1, 1, 32, 1, 1, 32, -5,-5")
	f.Add("7, _Z3barv, 1, 2, 3, 6, 32, 1, 1, 32, -1294967296, 0")
	f.Add(",,,,,,,,,,,")
	f.Add("kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts")
	const rel = "traces/stats_ctx_0x1"
	read := func(row string) ([]cascade.Kernel, Warnings, error) {
		var w Warnings
		var ks []cascade.Kernel
		ctx := "0x1"
		_, err := readStats(strings.NewReader(row+"\n"), rel, &ctx, nil, func(k cascade.Kernel) error { ks = append(ks, k); return nil }, &w)
		return ks, w, err
	}
	f.Fuzz(func(t *testing.T, row string) {
		ks, w, err := read(row)
		if err != nil {
			if !strings.HasPrefix(err.Error(), rel+":") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		// A line is a kernel, a warning, or a kernel kept with a warning
		// (a total_reported_insts that is no count).
		lines := strings.Count(row, "\n") + 1
		if len(ks) > lines || len(w.List) > lines {
			t.Fatalf("%d lines gave %d kernels and %d warnings", lines, len(ks), len(w.List))
		}
		for _, msg := range w.List {
			if !regexp.MustCompile(`^` + regexp.QuoteMeta(rel) + `:\d+: `).MatchString(msg) {
				t.Fatalf("warning %q does not name the file and line", msg)
			}
		}
		if strings.Contains(row, "\n") || strings.Contains(row, "\r") || len(ks) != 1 {
			return
		}
		k := ks[0]
		cols := strings.Split(row, ",")
		again := fmt.Sprintf("%s, %s, %d, %d, %d, %s, %d, %d, %d, %s, %d, %s", k.TraceFile, k.Name, k.GridX, k.GridY, k.GridZ,
			strings.TrimSpace(cols[5]), k.BlockX, k.BlockY, k.BlockZ, strings.TrimSpace(cols[9]), *k.Instructions, strings.TrimSpace(cols[11]))
		ks2, w2, err := read(again)
		if err != nil || len(ks2) != 1 {
			t.Fatalf("%q, written back as %q, gives %d kernels, %v, %v", row, again, len(ks2), w2.List, err)
		}
		if !reflect.DeepEqual(k, ks2[0]) {
			t.Fatalf("%q gives %+v, written back as %q gives %+v", row, k, again, ks2[0])
		}
	})
}

// checkBad checks that every skipped entry of a timing file names where it
// is: prefix[index] (and .events[j] below a step), indexes in file order.
func checkBad(t *testing.T, bad []BadEntry, prefixes ...string) {
	t.Helper()
	last := -1
	for _, b := range bad {
		if b.Index < last {
			t.Fatalf("bad entries out of order: %v", bad)
		}
		last = b.Index
		ok := false
		for _, p := range prefixes {
			head := fmt.Sprintf("%s[%d]", p, b.Index)
			if b.Path == head || strings.HasPrefix(b.Path, head+".events[") {
				ok = true
			}
		}
		if !ok || b.Reason == "" {
			t.Fatalf("bad entry %+v does not name its place (%q)", b, prefixes)
		}
	}
}

// checkTopError checks the error of a timing file that is not a list.
func checkTopError(t *testing.T, data []byte, err error) {
	t.Helper()
	msg := err.Error()
	if !json.Valid(data) && !jsonPosition.MatchString(msg) {
		t.Fatalf("error %q for %q names no line and column", msg, data)
	}
}

var timingSeeds = []string{
	`[{"kernel_id": 1, "duration_ns": 10.5}, {"kernel_id": 2}]`,
	`{"gpu": "H100", "rows": [{"kernel_id": 3, "context": "0x1", "cycles": 100, "invocation": 0}]}`,
	`[{"kernel_id": 1, "kernel_name": null, "duration_ns": null}]`,
	`[{"kernel_id": "2"}, {"kernel_id": 2.5}, 7, {"kernel_id": 5, "duration_ns": 0}, {"kernel_id": 6, "cycles": -1}]`,
	`[{"kernel_id": 9223372036854775807, "context": "0XAbC", "duration_ns": 1e308, "invocation": 3}]`,
	`{"rows": 3}`, `{}`, `"rows"`,
}

// FuzzRealTiming: real_timing.json never panics the parser; a file that is
// not a list fails naming the line and column of bad JSON; each skipped
// row names its place; each good row holds only what the format allows,
// and the good rows written back as real_timing.json parse to themselves.
func FuzzRealTiming(f *testing.F) {
	for _, s := range timingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := ParseRealTiming(data)
		if err != nil {
			checkTopError(t, data, err)
			return
		}
		checkBad(t, rt.Bad, "", "rows")
		type row struct {
			KernelID   int      `json:"kernel_id"`
			KernelName string   `json:"kernel_name,omitempty"`
			Context    string   `json:"context,omitempty"`
			DurationNs *float64 `json:"duration_ns,omitempty"`
			Cycles     *int64   `json:"cycles,omitempty"`
			Invocation *int     `json:"invocation,omitempty"`
		}
		var rows []row
		for _, r := range rt.Rows {
			if d := r.DurationNs; d != nil && (!(*d > 0) || math.IsInf(*d, 0)) {
				t.Fatalf("row %+v: duration_ns %v", r, *d)
			}
			if r.Cycles != nil && *r.Cycles < 0 || r.Invocation != nil && *r.Invocation < 0 {
				t.Fatalf("row %+v: a negative count", r)
			}
			rows = append(rows, row{r.KernelID, r.KernelName, r.Context, r.DurationNs, r.Cycles, r.Invocation})
		}
		if len(rows) == 0 {
			return
		}
		out, err := json.Marshal(rows)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseRealTiming(out)
		// What the rows say, not what else the file had (unknown
		// fields, null times), which is not written back.
		rowData := func(rows []TimingRow) []TimingRow {
			out := slices.Clone(rows)
			for i := range out {
				out[i].Index, out[i].Unknown, out[i].Null = 0, nil, nil
			}
			return out
		}
		if err != nil || len(again.Bad) > 0 || !reflect.DeepEqual(rowData(again.Rows), rowData(rt.Rows)) {
			t.Fatalf("rows of %q written back as %s parse to %+v, bad %v, %v", data, out, again.Rows, again.Bad, err)
		}
	})
}

// FuzzTimeline: corrected_timeline.json never panics the parser; bad JSON
// names its line and column; skipped steps and events name their place;
// a kept step ends at or after its start with a finite measured time and a
// step number of its own; kept steps written back parse to themselves.
func FuzzTimeline(f *testing.F) {
	for _, s := range []string{
		`{"steps": [{"step": 0, "start_ns": 100, "end_ns": 250, "events": [{"name": "k", "kind": "kernel", "start_ns": 110, "duration_ns": 20}]}]}`,
		`[{"start_ns": 1, "end_ns": 2}, {"start_ns": 5, "end_ns": 4}, {"step": 0, "start_ns": 1, "end_ns": 1}]`,
		`{"steps": [{"step": 1, "start_ns": 1700000000000000001, "end_ns": 1700000000000000002, "events": [1, {"duration_ns": -1}, {"name": 3}]}]}`,
		`{"steps": [{"step": 1, "start_ns": -9000000000000000000, "end_ns": 9000000000000000000}]}`,
		`{"steps": [{"step": 1, "start_ns": 1.5, "end_ns": 2.25, "events": "x"}]}`,
		`{"steps": [{"step": "1", "start_ns": 1e308, "end_ns": -1e308}]}`,
		`{"steps": {}}`, `{"x": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := ParseTimeline(data)
		if err != nil {
			checkTopError(t, data, err)
			return
		}
		checkBad(t, tl.Bad, "steps")
		type event struct {
			Name       string   `json:"name,omitempty"`
			Kind       string   `json:"kind,omitempty"`
			StartNs    float64  `json:"start_ns"`
			DurationNs *float64 `json:"duration_ns,omitempty"`
		}
		type step struct {
			Step    int     `json:"step"`
			StartNs float64 `json:"start_ns"`
			EndNs   float64 `json:"end_ns"`
			Events  []event `json:"events,omitempty"`
		}
		seen := map[int]bool{}
		var steps []step
		for _, s := range tl.Steps {
			if seen[s.Step] {
				t.Fatalf("step %d kept twice", s.Step)
			}
			seen[s.Step] = true
			if s.EndNs < s.StartNs || !(s.MeasuredNs >= 0) || math.IsInf(s.MeasuredNs, 0) {
				t.Fatalf("step %d kept with start %v, end %v, measured %v", s.Step, s.StartNs, s.EndNs, s.MeasuredNs)
			}
			st := step{Step: s.Step, StartNs: s.StartNs, EndNs: s.EndNs}
			for _, e := range s.Events {
				if e.Bad == "" && !(e.DurationNs >= 0) {
					t.Fatalf("event %+v kept with a negative duration", e)
				}
				ev := event{Name: e.Name, Kind: e.Kind, StartNs: e.StartNs}
				if e.Bad == "" {
					ev.DurationNs = &e.DurationNs
				}
				st.Events = append(st.Events, ev)
			}
			steps = append(steps, st)
		}
		if len(steps) == 0 {
			return
		}
		out, err := json.Marshal(map[string]any{"steps": steps})
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseTimeline(out)
		if err != nil || len(again.Steps) != len(tl.Steps) {
			t.Fatalf("steps of %q written back as %s: %d steps, %v", data, out, len(again.Steps), err)
		}
		for i, s := range again.Steps {
			want := tl.Steps[i]
			if s.Step != want.Step || s.StartNs != want.StartNs || s.EndNs != want.EndNs || len(s.Events) != len(want.Events) {
				t.Fatalf("step %+v written back as %s parses to %+v", want, out, s)
			}
			for j, e := range s.Events {
				w := want.Events[j]
				if (e.Bad == "") != (w.Bad == "") || w.Bad == "" && (e.Name != w.Name || e.Kind != w.Kind || e.StartNs != w.StartNs || e.DurationNs != w.DurationNs) {
					t.Fatalf("event %+v written back as %s parses to %+v", w, out, e)
				}
			}
		}
	})
}

// FuzzKernelMapping: kernel_mapping.json never panics the parser; bad JSON
// names its line and column; skipped entries name their place; the kept
// entries written back parse to themselves.
func FuzzKernelMapping(f *testing.F) {
	for _, s := range []string{
		`[{"step": 0, "event": 0, "kernel_id": 1}, {"step": 0, "event": 1, "kernel_id": 2, "context": "0x7F"}]`,
		`{"mappings": [{"step": 0, "event": "0", "kernel_id": 1}, {"step": 1.5}, null, {"step": 0, "event": 0, "kernel_id": 1, "context": 5}]}`,
		`{"mappings": [{"step": -1, "event": 9223372036854775807, "kernel_id": -9223372036854775808, "context": " ab "}]}`,
		`{"mappings": null}`, `{"steps": []}`, `1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseKernelMapping(data)
		if err != nil {
			checkTopError(t, data, err)
			return
		}
		checkBad(t, m.Bad, "", "mappings")
		if len(m.Entries) == 0 {
			return
		}
		type entry struct {
			Step     int    `json:"step"`
			Event    int    `json:"event"`
			KernelID int    `json:"kernel_id"`
			Context  string `json:"context,omitempty"`
		}
		var es []entry
		for _, e := range m.Entries {
			es = append(es, entry{e.Step, e.Event, e.Kernel.ID, e.Kernel.Context})
		}
		out, err := json.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		// An entry keeps its index in the file: written back without the
		// skipped ones, the kept ones are at 0, 1, ...
		want := slices.Clone(m.Entries)
		for i := range want {
			if i > 0 && m.Entries[i].Index <= m.Entries[i-1].Index {
				t.Fatalf("entries of %q out of their file's order: %+v", data, m.Entries)
			}
			want[i].Index = i
		}
		again, err := ParseKernelMapping(out)
		if err != nil || len(again.Bad) > 0 || !reflect.DeepEqual(again.Entries, want) {
			t.Fatalf("entries of %q written back as %s parse to %+v, bad %v, %v", data, out, again.Entries, again.Bad, err)
		}
	})
}
