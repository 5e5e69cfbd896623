package scanner

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// play runs a row's walks through inspect and apply as scanTrace and commit
// do, and returns the trace's state after each walk, the trace at the end
// and why it started over.
func play(r row) (states []cascade.TraceState, tr cascade.Trace, why string) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var h history
	found := r.stored != nil
	if found {
		tr = *r.stored
		tr.Prompts, tr.Warnings = slices.Clone(tr.Prompts), slices.Clone(tr.Warnings)
	}
	// A file's time is that of the first walk that saw its content.
	type version struct {
		content string
		at      time.Time
	}
	seen := map[string]version{}
	for _, w := range r.walks {
		now := t0.Add(w.at)
		id := cmp.Or(r.id, "t")
		tree := &tracedir.Tree{Root: "/nonexistent/" + id, Files: map[string]tracedir.File{}, Dirs: map[string]time.Time{}}
		for p, c := range w.files {
			v, ok := seen[p]
			if !ok || v.content != c {
				v = version{c, now}
			}
			f := tracedir.File{Path: p, Size: int64(len(c)), ModTime: v.at}
			if target, ok := strings.CutPrefix(c, "-> "); ok {
				f.Link, f.Target, f.Size = true, target, int64(len(target))
			}
			tree.Files[p] = f
		}
		for p := range seen {
			if _, ok := w.files[p]; !ok {
				delete(seen, p)
			}
		}
		for p, f := range tree.Files {
			seen[p] = version{w.files[p], f.ModTime}
		}
		saw := sight{tree: tree, realTiming: r.realTiming, writing: w.at < r.writingUntil}
		if c, ok := w.files[tracedir.MetadataFile]; ok {
			saw.meta = []byte(c)
		}
		var l look
		l, h = inspect(saw, h, now, testInterval)
		switch {
		case l.gone:
			found, tr = false, cascade.Trace{}
		default:
			if !found {
				found, tr = true, cascade.Trace{ID: id, State: U}
			}
			c, w := l.apply(&tr)
			if c == startedOver {
				why = w
				l.apply(&tr) // the guide's rules at once, as commit does
			}
			h.kept(l, tr) // as the commit's saved does
		}
		if found {
			states = append(states, tr.State)
		} else {
			states = append(states, none)
		}
	}
	return states, tr, why
}

// playRows plays each row as a subtest, checking its states, error, why
// it started over, and its check.
func playRows(t *testing.T, rows []row) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if len(r.want) != len(r.walks) {
				t.Fatalf("row: %d walks, %d states", len(r.walks), len(r.want))
			}
			states, tr, why := play(r)
			if !slices.Equal(states, r.want) {
				t.Errorf("states %q, want %q", states, r.want)
			}
			if got := cascade.Deref(tr.Error); got != r.err {
				t.Errorf("error %q, want %q", got, r.err)
			}
			if why != r.why {
				t.Errorf("started over because %q, want %q", why, r.why)
			}
			if r.check != nil {
				r.check(t, tr)
			}
		})
	}
}
