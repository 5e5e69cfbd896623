package posttraces

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// copyDir copies the regular files of src into a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestGolden post-processes hand-written traces in testdata/golden/*/in and
// compares with the hand-written testdata/golden/*/want (whose .xz names
// hold the decompressed text), in --text mode and, rendered back to text,
// in .tracez mode.
func TestGolden(t *testing.T) {
	cases := []struct {
		name    string
		cluster bool
	}{
		{name: "classic"},
		{name: "cluster", cluster: true},
		{name: "contexts"},
	}
	for _, tc := range cases {
		for _, xzMode := range []string{"", "-"} {
			t.Run(tc.name+"/xz="+xzMode, func(t *testing.T) {
				if xzMode == "" {
					testkit.SkipShort(t, "runs xz") // the xz="-" twin runs the pure-Go codec
				}
				want := filepath.Join("testdata/golden", tc.name, "want")
				wantFiles, err := os.ReadDir(want)
				if err != nil {
					t.Fatal(err)
				}

				dir := copyDir(t, filepath.Join("testdata/golden", tc.name, "in"))
				if err := Run(context.Background(), dir, Options{Text: true, Jobs: 2, XZ: xzMode, WorkDir: t.TempDir()}); err != nil {
					t.Fatal(err)
				}
				for _, f := range wantFiles {
					w, err := os.ReadFile(filepath.Join(want, f.Name()))
					if err != nil {
						t.Fatal(err)
					}
					got := readRaw(t, filepath.Join(dir, f.Name()))
					if got != string(w) {
						t.Errorf("%s:\n got %q\nwant %q", f.Name(), got, w)
					}
				}

				dir = copyDir(t, filepath.Join("testdata/golden", tc.name, "in"))
				if err := Run(context.Background(), dir, Options{Jobs: 1, XZ: xzMode, SubchunkInsts: 2, WorkDir: t.TempDir()}); err != nil {
					t.Fatal(err)
				}
				for _, f := range wantFiles {
					w, err := os.ReadFile(filepath.Join(want, f.Name()))
					if err != nil {
						t.Fatal(err)
					}
					name := f.Name()
					if strings.HasSuffix(name, ".g") {
						got := readRaw(t, filepath.Join(dir, name))
						wantList := strings.ReplaceAll(strings.ReplaceAll(string(w), ".traceg.xz", ".tracez"), ".traceg", ".tracez")
						if got != wantList {
							t.Errorf("%s (tracez mode):\n got %q\nwant %q", name, got, wantList)
						}
						continue
					}
					zname := strings.TrimSuffix(strings.TrimSuffix(name, ".xz"), "g") + "z"
					header, blocks := readTracez(t, filepath.Join(dir, zname))
					if got := renderText(header, blocks, tc.cluster); got != string(w) {
						t.Errorf("%s rendered:\n got %q\nwant %q", zname, got, w)
					}
				}
			})
		}
	}
}
