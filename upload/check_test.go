package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// TestSourceChecked: an empty directory, or one whose kernel list names a
// trace that is not there, is refused before anything is written, with
// the file and line at fault and what to do; a trace with its kernel
// traces, an .xz one, or a post-processed one whose raw files were left
// out, goes.
func TestSourceChecked(t *testing.T) {
	list := "MemcpyHtoD,0x00007f32c5500000,800000\nkernel-1.trace\nkernel-2.trace\n"
	cases := []struct {
		name  string
		files map[string]string
		want  string // "" for an upload that goes
	}{
		{"empty", map[string]string{}, "is empty: not an NVBit trace directory"},
		{"only metadata.json", map[string]string{"metadata.json": "{}"}, "holds only metadata.json"},
		{"a kernel trace missing", map[string]string{"traces/kernelslist": list, "traces/kernel-1.trace": "x"},
			"kernel traces missing, nothing was sent: traces/kernelslist:3 names kernel-2.trace, which is not in traces/; copy the missing files there (or trace again) and run the same command"},
		{"complete", map[string]string{"traces/kernelslist": list, "traces/kernel-1.trace": "x", "traces/kernel-2.trace": "y"}, ""},
		{"xz", map[string]string{"traces/kernelslist": list, "traces/kernel-1.trace.xz": "x", "traces/kernel-2.trace.xz": "y"}, ""},
		{"post-processed", map[string]string{"traces/kernelslist": list, "traces/kernelslist.g": "kernel-1.traceg\n", "traces/kernel-1.traceg": "x"}, ""},
		{"reported failed", map[string]string{"metadata.json": `{"status": "failed"}`, "traces/kernelslist": list}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "trace")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.WriteTree(t, src, c.files)
			dest := filepath.Join(t.TempDir(), "dest")
			_, err := Upload(context.Background(), Options{Source: src, Dest: dest})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
			if len(c.files) == 0 && !errors.Is(err, ErrNotATrace) {
				t.Errorf("%v is not ErrNotATrace", err)
			}
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the destination was written: %v", err)
			}
		})
	}
}
