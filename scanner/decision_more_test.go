package scanner

import (
	"slices"
	"testing"
	"time"

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

// TestDecisionStreamWaiting: an upload without a files list whose kernel
// lists lack their stats files says so in its warnings once its tree has
// not changed for waitingNoteAfter, as a listed upload does.
func TestDecisionStreamWaiting(t *testing.T) {
	streamed := with(perContext(), "metadata.json", `{"model": "m"}`)
	noStats := with(streamed, "traces/stats_ctx_0x1", "", "traces/kernelslist_ctx_0x2", "kernel-3-ctx_0x2.trace.xz\n")
	at := func(files map[string]string, ds ...time.Duration) []walk {
		var ws []walk
		for _, d := range ds {
			ws = append(ws, walk{d, files})
		}
		return ws
	}
	playRows(t, []row{
		{name: "two kernel lists without their stats: no note before the wait",
			walks: at(noStats, 0, waitingNoteAfter/2), want: []cascade.TraceState{U, U}, check: wantWarnings()},
		{name: "two kernel lists without their stats: a note naming them after the wait",
			walks: at(noStats, 0, waitingNoteAfter, time.Hour), want: []cascade.TraceState{U, U, U},
			check: wantWarnings("metadata.json: no files list, so the upload is complete once every raw kernel list has its stats file: traces/stats_ctx_0x1 (for traces/kernelslist_ctx_0x1) and traces/stats_ctx_0x2 (for traces/kernelslist_ctx_0x2) are not there")},
		{name: "no metadata.json: no note before the wait",
			walks: at(perContext(), 0, waitingNoteAfter/2), want: []cascade.TraceState{U, U}, check: wantWarnings()},
		{name: "no metadata.json: a note saying it is awaited after the wait",
			walks: at(perContext(), 0, waitingNoteAfter), want: []cascade.TraceState{U, U}, check: wantWarnings(noMetadataNote)},
		{name: "no kernel list at all: a note after the wait",
			walks: at(map[string]string{"metadata.json": `{"model": "m"}`}, 0, waitingNoteAfter), want: []cascade.TraceState{U, U},
			check: wantWarnings("metadata.json: no files list, so the upload is complete once every raw kernel list has its stats file: no raw kernel list (traces/kernelslist_ctx_* or traces/kernelslist) is there")},
	})
}

// TestDecisionFilesListEdges: a files list that is empty fails the trace
// saying so; an entry naming a dotfile, which the scanner skips, is not
// waited for, with a warning naming it; a list of dotfiles alone fails.
func TestDecisionFilesListEdges(t *testing.T) {
	pc := perContext()
	dotted := meta(nil, with(pc, "traces/.hidden", "h"))
	playRows(t, []row{
		{name: "an empty list: failed at once, saying so",
			walks: []walk{{0, with(pc, "metadata.json", `{"model": "m", "files": []}`)}}, want: []cascade.TraceState{F},
			err: "metadata.json: files: the list is empty; it should list every file of the upload with its size in bytes (as cascade upload writes it)"},
		{name: "a listed dotfile: not waited for, a warning naming it",
			walks: []walk{{0, with(pc, "metadata.json", dotted, "traces/.hidden", "h")}}, want: []cascade.TraceState{P},
			check: wantWarnings(`metadata.json: files[0]: "traces/.hidden" is a dotfile, which Cascade skips (dotfiles are uploads in flight), so it is not waited for`)},
		{name: "two listed dotfiles, not there: one warning naming both",
			walks: []walk{{0, with(pc, "metadata.json", meta(nil, with(pc, ".DS_Store", "d", "traces/.hidden", "h")))}}, want: []cascade.TraceState{P},
			check: wantWarnings(`metadata.json: files: 2 entries name dotfiles, which Cascade skips (dotfiles are uploads in flight), so they are not waited for: files[0] ".DS_Store", files[1] "traces/.hidden"`)},
		{name: "dotfiles alone: failed",
			walks: []walk{{0, with(pc, "metadata.json", `{"files": [{"path": ".DS_Store", "size": 1}]}`)}}, want: []cascade.TraceState{F},
			err: `metadata.json: files: the list names only dotfiles (files[0] ".DS_Store"), which Cascade skips; it should list every file of the upload with its size in bytes (as cascade upload writes it)`},
	})
}
