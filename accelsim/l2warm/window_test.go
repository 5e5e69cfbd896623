package l2warm_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
)

// TestWindowTraceLess: a trace that holds only some launches' kernel
// traces (a sampling plan's traceList) warms a segment as the whole
// trace does when it holds the segment's window (Window), and says so
// (Warm.Gap) when it does not, instead of warming from older launches.
func TestWindowTraceLess(t *testing.T) {
	dir := t.TempDir()
	fiveLaunches(t, dir)
	list := func(name string, ids ...string) *kernellist.List {
		t.Helper()
		var b strings.Builder
		b.WriteString("MemcpyHtoD,0x0000000000000080,128\n")
		for _, id := range ids {
			b.WriteString("kernel-" + id + ".traceg\n")
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := kernellist.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	whole := list("whole.g", "1", "2", "3", "4", "5")
	c := l2warm.NewCache("")
	seg := []kernellist.Ref{{ID: 4}, {ID: 5}}
	const two = 2 * l2warm.LineBytes
	for _, tc := range []struct {
		capacity uint64
		window   []kernellist.Ref
	}{
		{1 << 20, []kernellist.Ref{{ID: 3}, {ID: 2}, {ID: 1}}}, // the list began at kernel 1
		{two, []kernellist.Ref{{ID: 3}, {ID: 2}}},              // launch 2 crossed 2 lines
		{0, []kernellist.Ref{{ID: 3}}},
	} {
		got, gap, err := l2warm.Window(c, whole, kernellist.Ref{ID: 4}, tc.capacity)
		if err != nil || gap != nil || !reflect.DeepEqual(got, tc.window) {
			t.Errorf("capacity %d: window %v, gap %v, %v; want %v", tc.capacity, got, gap, err, tc.window)
		}
		// The window and the segment traced, the rest not: the same warming.
		ids := []string{"4", "5"}
		for _, r := range tc.window {
			ids = append([]string{strconv.Itoa(r.ID)}, ids...)
		}
		less := list("less.g", ids...)
		want, err := l2warm.PlanAfterWarmup(c, whole, seg, 1, tc.capacity)
		if err != nil {
			t.Fatal(err)
		}
		got2, err := l2warm.PlanAfterWarmup(c, less, seg, 1, tc.capacity)
		if err != nil || !reflect.DeepEqual(got2, want) {
			t.Errorf("capacity %d, %v traced: %+v, %v; the whole trace's %+v", tc.capacity, ids, got2, err, want)
		}
	}

	// Launch 2 untraced: the window stops at launch 3 and says why, where
	// the whole trace's reads 3, 2 and 1 (line 3 is not warmed, for the
	// whole trace's launch 2 wrote it).
	less := list("gap.g", "1", "3", "4", "5")
	w, err := l2warm.PlanAfterWarmup(c, less, seg, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if w.Gap == nil || w.Gap.Before != (kernellist.Ref{ID: 3}) || w.Launches != 1 || !reflect.DeepEqual(w.Lines, l2warm.Lines{{Lo: 20, Hi: 21}}) {
		t.Errorf("launch 2 untraced: %d launches, lines %v, gap %v; want 1, [20], before kernel 3", w.Launches, w.Lines, w.Gap)
	}
	if got := w.Gap.String(); got != "kernel 2 has no kernel trace" {
		t.Errorf("gap: %q", got)
	}
	if _, gap, _ := l2warm.Window(c, less, kernellist.Ref{ID: 4}, 1<<20); gap == nil {
		t.Error("Window over a gap: no gap")
	}
	// A list that begins past kernel 1 lacks the launches before it.
	if w, err := l2warm.PlanAfterWarmup(c, list("late.g", "3", "4", "5"), seg, 1, 1<<20); err != nil || w.Gap == nil || w.Gap.Before.ID != 3 {
		t.Errorf("list from kernel 3: gap %v, %v; want before kernel 3", w.Gap, err)
	}
	// One the window's L2 worth of lines stops before the gap is whole.
	if w, err := l2warm.PlanAfterWarmup(c, less, seg, 1, 0); err != nil || w.Gap != nil || w.Launches != 1 {
		t.Errorf("window within the traced launches: %+v, %v", w, err)
	}
	// Kernels of another context keep their own count: context 0x2's
	// kernel 1 between 0x1's 2 and 3 is no gap, nor 0x2's 2 after it.
	for _, f := range []string{"1-ctx_0x1", "2-ctx_0x1", "1-ctx_0x2", "3-ctx_0x1", "2-ctx_0x2"} {
		if err := os.Link(filepath.Join(dir, "kernel-1.traceg"), filepath.Join(dir, "kernel-"+f+".traceg")); err != nil {
			t.Fatal(err)
		}
	}
	two2 := list("ctx.g", "1-ctx_0x1", "2-ctx_0x1", "1-ctx_0x2", "3-ctx_0x1", "2-ctx_0x2")
	if got, gap, err := l2warm.Window(c, two2, kernellist.Ref{ID: 2, Context: "0x2"}, 1<<20); err != nil || gap != nil || len(got) != 4 {
		t.Errorf("two contexts: window %v, gap %v, %v; want 4 kernels, no gap", got, gap, err)
	}
	if _, gap, err := l2warm.Window(c, list("ctx-less.g", "1-ctx_0x1", "1-ctx_0x2", "3-ctx_0x1", "2-ctx_0x2"), kernellist.Ref{ID: 2, Context: "0x2"}, 1<<20); err != nil || gap == nil || gap.Before != (kernellist.Ref{ID: 3, Context: "0x1"}) {
		t.Errorf("two contexts, 0x1's kernel 2 untraced: gap %v, %v; want before 0x1's kernel 3", gap, err)
	}
	// 0x2's kernel 3 is nowhere, and the window ended on 0x1's kernel:
	// the whole trace's window may have held it (a gap); 0x1's kernel 5,
	// nowhere either, lies beyond the window (none).
	for _, f := range []string{"6-ctx_0x1", "4-ctx_0x2"} {
		if err := os.Link(filepath.Join(dir, "kernel-3.traceg"), filepath.Join(dir, "kernel-"+f+".traceg")); err != nil {
			t.Fatal(err)
		}
	}
	if _, gap, err := l2warm.Window(c, list("ctx-far.g", "6-ctx_0x1", "4-ctx_0x2"), kernellist.Ref{ID: 4, Context: "0x2"}, 0); err != nil || gap == nil || gap.Before != (kernellist.Ref{ID: 4, Context: "0x2"}) {
		t.Errorf("two contexts, the segment's predecessor nowhere: gap %v, %v; want before 0x2's kernel 4", gap, err)
	}
	if w, gap, err := l2warm.Window(c, whole, kernellist.Ref{ID: 9}, 1<<20); err != nil || w != nil || gap != nil {
		t.Errorf("a kernel not in the list: %v, %v, %v; want none", w, gap, err)
	}
}
