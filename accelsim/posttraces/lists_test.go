package posttraces

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFindListsOrder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"kernelslist_ctx_0x20", "kernelslist_ctx_0x3", "kernelslist_ctx_zz", "kernelslist",
		"kernelslist.g", "kernelslist_ctx_0x3.g", ".kernelslist_ctx_0x1.tmp", "stats.csv", "kernelslist_ctx_0xa"} {
		writeFile(t, dir, n, "")
	}
	os.Mkdir(filepath.Join(dir, "kernelslist_ctx_0x0"), 0o755)
	paths, err := findLists(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
	}
	want := []string{"kernelslist", "kernelslist_ctx_0x3", "kernelslist_ctx_0xa", "kernelslist_ctx_0x20", "kernelslist_ctx_zz"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %q, want %q", got, want)
	}
	if _, err := findLists(t.TempDir()); err == nil {
		t.Error("findLists of an empty dir succeeded")
	}
}

// TestFindListsInTraceFolder: a trace's folder, given in place of its
// traces/ folder, is said to be one; a folder without lists anywhere
// is not.
func TestFindListsInTraceFolder(t *testing.T) {
	pp := t.TempDir()
	if err := os.Mkdir(filepath.Join(pp, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := findLists(pp)
	want := pp + ": no kernelslist or kernelslist_ctx_* file"
	if err == nil || err.Error() != want {
		t.Errorf("no lists anywhere: %v, want %q", err, want)
	}
	writeFile(t, filepath.Join(pp, "traces"), "kernelslist_ctx_0x1", "")
	writeFile(t, pp, "metadata.json", "{}")
	_, err = findLists(pp)
	want += "; it has a traces folder that does: give " + filepath.Join(pp, "traces")
	if err == nil || err.Error() != want {
		t.Errorf("a trace's folder: %v, want %q", err, want)
	}
}

func TestOutputName(t *testing.T) {
	cases := []struct {
		in, tracez, text string
		err              bool
	}{
		{in: "kernel-1.trace", tracez: "kernel-1.tracez", text: "kernel-1.traceg"},
		{in: "kernel-1.trace.xz", tracez: "kernel-1.tracez", text: "kernel-1.traceg.xz"},
		{in: "kernel-2-ctx_0x6165bdd7ec90.trace.xz", tracez: "kernel-2-ctx_0x6165bdd7ec90.tracez", text: "kernel-2-ctx_0x6165bdd7ec90.traceg.xz"},
		{in: "kernel-1.trace.gz", err: true},
	}
	for _, tc := range cases {
		z, err1 := outputName(tc.in, false)
		g, err2 := outputName(tc.in, true)
		if tc.err {
			if err1 == nil || err2 == nil {
				t.Errorf("%s: no error", tc.in)
			}
			continue
		}
		if z != tc.tracez || g != tc.text || err1 != nil || err2 != nil {
			t.Errorf("%s → %s, %s (%v, %v); want %s, %s", tc.in, z, g, err1, err2, tc.tracez, tc.text)
		}
	}
}
