package tracedir

import (
	"github.com/cascade-sim/cascade"
	"strings"
	"testing"
)

// FuzzParseMetadata: nothing a metadata.json holds may panic the parser.
func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{
		`{"model": "m", "layers": [0, 1], "prompts": "p", "files": [{"path": "a", "size": 1}]}`,
		`{"layers": "0-3", "files": [{"path": null}], "status": 3}`,
		`[1, 2]`, `null`, `{`, ``, `{"files": {"a": 1}}`, `{"layers": 1.5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMetadata(b)
		if err != nil {
			return
		}
		for _, f := range m.Files {
			if f.Size < 0 {
				t.Fatalf("accepted a negative size from %q", b)
			}
		}
	})
}

// FuzzStatsRows: malformed stats rows are warnings, never a panic.
func FuzzStatsRows(f *testing.F) {
	f.Add("kernel-1-ctx_0x1.trace.xz, _Z3fooi, 98, 1, 1, 98, 1024, 1, 1, 1024, 50066,50066")
	f.Add("kernel-2.trace, x, -1, 1, 1, 1, 32, 1, 1, 32, -5,-5")
	f.Add(",,,,,,,,,,,")
	f.Fuzz(func(t *testing.T, row string) {
		var w Warnings
		n := 0
		err := readStats(strings.NewReader(row+"\n"), "traces/stats_ctx_0x1", nil, func(cascade.Kernel) error { n++; return nil }, &w)
		if err == nil && n+len(w.List) > strings.Count(row, "\n")+1 {
			t.Fatalf("one row gave %d kernels and %d warnings", n, len(w.List))
		}
	})
}
