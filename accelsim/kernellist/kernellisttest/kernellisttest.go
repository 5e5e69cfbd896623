package kernellisttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// WriteTraces writes a processed trace directory: a kernelslist.g with the
// given lines, and for every kernel line a .traceg file whose header names
// the kernel, padded so that each file has a different size. It returns the
// list's path.
func WriteTraces(t testing.TB, dir string, lines ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "kernel") {
			continue
		}
		ref, _ := kernellist.ParseTraceFileName(l)
		header := fmt.Sprintf("-kernel name = _Z7kernel%dPf\n-kernel id = %d\n-grid dim = (98,1,1)\n-block dim = (1024,1,1)\n"+
			"-binary version = 90\n-cuda stream id = 0\n-accelsim tracer version = 5\n\n#traces format = [line_num] PC mask ...\n",
			ref.ID, ref.ID)
		body := header + strings.Repeat("0010 ffffffff 1 R2 IMAD.MOV.U32 1 R255 0 0\n", i+1)
		path := filepath.Join(dir, filepath.FromSlash(l))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, kernellist.Name)
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}
