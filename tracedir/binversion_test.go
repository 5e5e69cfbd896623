package tracedir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/cascade-sim/cascade/tracedir"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

const header = "-kernel name = _Z6vecAddPdS_S_i\n-kernel id = 1\n-grid dim = (98,1,1)\n-binary version = %s\n-cuda stream id = 0\n\n#traces format = ...\n0 0 0 0 0008 ffffffff 1 R1 MOV 0 0\n"

func TestBinaryVersion(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // path → binary version in its header ("" for a file without one)
		xz    bool
		want  tracedir.BinaryVersion
		found bool
	}{
		{"raw", map[string]string{"traces/kernel-1.trace": "61"}, false, tracedir.BinaryVersion{Version: 61, File: "traces/kernel-1.trace"}, true},
		{"xz", map[string]string{"traces/kernel-1-ctx_0x55d2c3a1e4f0.trace.xz": "90"}, true, tracedir.BinaryVersion{Version: 90, File: "traces/kernel-1-ctx_0x55d2c3a1e4f0.trace.xz"}, true},
		{"first by number", map[string]string{"traces/kernel-10.trace": "70", "traces/kernel-2.trace": "86"}, false, tracedir.BinaryVersion{Version: 86, File: "traces/kernel-2.trace"}, true},
		{"post-processed only", map[string]string{"traces/kernel-1.traceg": "75"}, false, tracedir.BinaryVersion{Version: 75, File: "traces/kernel-1.traceg"}, true},
		{"no header line", map[string]string{"traces/kernel-1.trace": ""}, false, tracedir.BinaryVersion{}, false},
		{"no kernel trace", map[string]string{"traces/stats.csv": "61"}, false, tracedir.BinaryVersion{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, v := range c.files {
				data := []byte(header)
				if v == "" {
					data = []byte("-kernel name = k\n\n0 0 0 0 0008 ffffffff 0 EXIT 0 0\n")
				} else {
					data = []byte(bytes.ReplaceAll(data, []byte("%s"), []byte(v)))
				}
				if c.xz {
					var b bytes.Buffer
					w, _ := xz.NewWriter(&b)
					w.Write(data)
					w.Close()
					data = b.Bytes()
				}
				writeFile(t, filepath.Join(dir, p), data)
			}
			tree, err := tracedir.Walk(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := tree.BinaryVersion()
			if ok != c.found || got != c.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, c.want, c.found)
			}
			if ok && got.Arch() != "sm_"+c.files[got.File] {
				t.Errorf("arch %q", got.Arch())
			}
		})
	}
}
