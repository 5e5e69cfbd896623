package tracedir_test

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade/tracedir"
)

// TestGone: the files gone since an earlier walk are named when the
// post-processor's outputs or the kernel lists show them and their paths
// account for the change of the paths' sum exactly; else counted. A
// processed kernel whose raw trace was never uploaded (an upload of
// processed traces) is not taken for one gone.
func TestGone(t *testing.T) {
	tree := func(paths ...string) *tracedir.Tree {
		tr := &tracedir.Tree{Root: "/nonexistent", Files: map[string]tracedir.File{}, Dirs: map[string]time.Time{}}
		for _, p := range paths {
			tr.Files[p] = tracedir.File{Path: p, Size: 1, ModTime: time.Unix(1, 0)}
		}
		return tr
	}
	paths := func(tr *tracedir.Tree, m *tracedir.Metadata) tracedir.UploadPaths {
		_, _, p := tracedir.UploadSumPaths(tr, m)
		return p
	}
	without := func(all []string, gone ...string) []string {
		var out []string
		for _, p := range all {
			keep := true
			for _, g := range gone {
				keep = keep && p != g
			}
			if keep {
				out = append(out, p)
			}
		}
		return out
	}
	// A tracer run of one program, post-processed to .traceg.
	old := []string{"traces/kernelslist", "traces/stats.csv", "traces/kernel-1.trace", "traces/kernel-2.trace", "traces/kernel-3.trace",
		"traces/kernelslist.g", "traces/kernel-1.traceg", "traces/kernel-2.traceg", "traces/kernel-3.traceg"}
	// Processed traces uploaded without their raw ones.
	processed := []string{"traces/kernelslist", "traces/stats.csv", "traces/kernelslist.g", "traces/kernel-1.tracez", "traces/kernel-2.tracez"}
	listed := &tracedir.Metadata{HasFiles: true}
	for _, tc := range []struct {
		name   string
		before []string
		gone   []string
		added  []string
		meta   *tracedir.Metadata
		want   string
	}{
		{name: "a raw kernel trace", before: old, gone: []string{"traces/kernel-2.trace"}, want: "traces/kernel-2.trace gone"},
		{name: "two", before: old, gone: []string{"traces/kernel-3.trace", "traces/kernel-1.trace"}, want: "traces/kernel-1.trace and 1 more gone"},
		{name: "the raw list and its stats", before: old, gone: []string{"traces/kernelslist", "traces/stats.csv"}, want: "traces/kernelslist and 1 more gone"},
		{name: "the stats of processed traces", before: processed, gone: []string{"traces/stats.csv"}, want: "traces/stats.csv gone"},
		{name: "a file no output or list shows", before: append(processed, "traces/kernel-7.trace"), gone: []string{"traces/kernel-7.trace"}, want: "1 data file gone"},
		{name: "one gone, one come", before: old, gone: []string{"traces/kernel-2.trace"}, added: []string{"traces/kernel-4.trace"}, want: ""},
		{name: "none gone", before: old, want: ""},
		{name: "a files list names its missing files itself", before: old, gone: []string{"traces/kernel-2.trace"}, meta: listed, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			earlier := tree(tc.before...)
			now := tree(append(without(tc.before, tc.gone...), tc.added...)...)
			if got := tracedir.Gone(now, tc.meta, paths(earlier, nil), paths(now, nil)); got != tc.want {
				t.Errorf("Gone = %q, want %q", got, tc.want)
			}
		})
	}
}
