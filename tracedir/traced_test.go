package tracedir_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestRunLists: the lists of a trace taken in several tracer runs
// (kernelslist_ctx_X-…, kernelslist-…) are raw kernel lists of their
// context, with its stats file; processed lists are not.
func TestRunLists(t *testing.T) {
	for name, want := range map[string]struct {
		ctx string
		ok  bool
	}{
		"kernelslist": {"", true}, "kernelslist-5-7": {"", true}, "kernelslist_ctx_0x1": {"0x1", true},
		"traces/kernelslist_ctx_0x1-20-22": {"0x1", true}, "kernelslist.g": {}, "kernelslist_ctx_0x1.g": {},
		"kernelslist_ctx_0x1-5-7.g": {}, "kernelslists": {}, "kernelslist_ctx_": {}, ".kernelslist-5-7": {},
	} {
		if ctx, ok := tracedir.RawListContext(name); ctx != want.ctx || ok != want.ok {
			t.Errorf("%s: %q %v, want %q %v", name, ctx, ok, want.ctx, want.ok)
		}
	}
	dir := t.TempDir()
	for _, n := range []string{"kernelslist_ctx_0x1-5-7", "kernelslist_ctx_0x1-20-22", "kernelslist_ctx_0x1.g", "kernelslist-1-2", "kernelslist.g", "stats_ctx_0x1"} {
		os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "traces", n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := tracedir.Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	lists := tree.KernelLists()
	if want := []string{"traces/kernelslist_ctx_0x1-20-22", "traces/kernelslist_ctx_0x1-5-7", "traces/kernelslist-1-2"}; !reflect.DeepEqual(lists, want) {
		t.Fatalf("lists %q, want %q", lists, want)
	}
	if s := tracedir.StatsFor(lists[0]); s != "traces/stats_ctx_0x1" {
		t.Errorf("stats of %s: %s", lists[0], s)
	}
	if s := tracedir.StatsFor(lists[2]); s != "traces/stats.csv" {
		t.Errorf("stats of %s: %s", lists[2], s)
	}
	if !tracedir.IsUploadFile("traces/kernelslist_ctx_0x1-5-7") || tracedir.IsUploadFile("traces/kernelslist_ctx_0x1.g") {
		t.Error("IsUploadFile: a run's list is an upload file, a processed one is not")
	}
}

// TestTracedMark: kernels kernelslist.g names are traced, by id and
// context; a kernel line that names no kernel-N file leaves every launch
// traced.
func TestTracedMark(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "kernelslist.g")
	os.WriteFile(list, []byte("MemcpyHtoD,0x0000000000001000,64\nkernel-2-ctx_0xAB.traceg\nkernel-3.tracez\n"), 0o644)
	tr, err := tracedir.ReadTraced(list)
	if err != nil || tr.Lines != 2 {
		t.Fatalf("%+v, %v", tr, err)
	}
	for _, c := range []struct {
		id     int
		ctx    *string
		traced bool
	}{{2, cascade.Ptr("0xab"), true}, {2, cascade.Ptr("0xAB"), true}, {2, nil, false}, {2, cascade.Ptr("0x1"), false}, {3, nil, true}, {1, nil, false}} {
		k := cascade.Kernel{KernelID: c.id, Context: c.ctx}
		if untraced := tr.Mark(&k); untraced == c.traced || k.Untraced == c.traced {
			t.Errorf("kernel %d@%v: untraced %v", c.id, cascade.Deref(c.ctx), untraced)
		}
	}
	os.WriteFile(list, []byte("kernel-2.traceg\nkernel_mine.traceg\n"), 0o644)
	if tr, err = tracedir.ReadTraced(list); err != nil {
		t.Fatal(err)
	}
	k := cascade.Kernel{KernelID: 9}
	if tr.Mark(&k) || k.Untraced {
		t.Error("a list of names Cascade cannot read marked a launch untraced")
	}
}

// TestReadTracedRefusesShellBytes: a kernelslist.g naming a trace with a
// byte the simulator's shell would act on fails its trace, naming the line.
func TestReadTracedRefusesShellBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kernelslist.g")
	if err := os.WriteFile(p, []byte("kernel-1.traceg\nkernel-2.traceg && touch x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tracedir.ReadTraced(p); err == nil || !strings.Contains(err.Error(), `line 2: kernel trace "kernel-2.traceg && touch x" holds " "`) {
		t.Fatalf("ReadTraced: %v", err)
	}
}
