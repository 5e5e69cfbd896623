package scanner

import (
	"slices"
	"testing"

	"github.com/cascade-sim/cascade"
)

// wantWarnings checks a trace's scan warnings.
func wantWarnings(want ...string) func(t *testing.T, tr cascade.Trace) {
	return func(t *testing.T, tr cascade.Trace) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		got := tr.ScanWarnings
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("scan warnings %q, want %q", got, want)
		}
	}
}

// TestDecisionStatus: metadata.json's status. "failed" in any case fails
// the trace, keeping its verdict even when its error field is no string;
// a status Cascade does not know is a warning naming the field and the
// values it knows.
func TestDecisionStatus(t *testing.T) {
	pc := perContext()
	walks := func(m map[string]any) []walk {
		return []walk{{0, with(pc, "metadata.json", meta(m, pc))}}
	}
	playRows(t, []row{
		{name: "FAILED is failed", walks: walks(map[string]any{"status": "FAILED", "error": "OOM"}), want: []cascade.TraceState{F},
			err: `metadata.json: status "FAILED": OOM`},
		{name: "an unknown status: a warning",
			walks: walks(map[string]any{"status": "ok"}), want: []cascade.TraceState{P},
			check: wantWarnings(`metadata.json: status: "ok" is none Cascade knows (want "failed", which fails the trace, "complete" or "uploading"); the trace is taken as not failed`)},
		{name: "known statuses: no warning", walks: walks(map[string]any{"status": "Complete"}), want: []cascade.TraceState{P}, check: wantWarnings()},
		{name: "uploading: no warning", walks: walks(map[string]any{"status": "uploading"}), want: []cascade.TraceState{P}, check: wantWarnings()},
		{name: "failed with an error that is no string: failed, saying so",
			walks: walks(map[string]any{"status": "failed", "error": map[string]any{"code": 1}}), want: []cascade.TraceState{F},
			err: `metadata.json: status "failed"; its error field is not a string: {"code":1}`},
		{name: "not failed, an error that is no string: a warning",
			walks: walks(map[string]any{"error": []int{1}}), want: []cascade.TraceState{P},
			check: wantWarnings(`metadata.json: error: want a string, got [1]; ignored, as status is not "failed"`)},
	})
}
