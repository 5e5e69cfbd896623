package kernellist_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// TestCheckFiles: every kernel line whose file is gone is named, the
// first with its line; MemcpyHtoD lines name no file; a subset is
// refused for a missing kernel it keeps, not for one it leaves out.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	var list strings.Builder
	list.WriteString("MemcpyHtoD,0x00007f1c2e000000,8192\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&list, "kernel-%d.traceg\n", i)
		if i%4 != 2 { // 2 and 6 are gone
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("kernel-%d.traceg", i)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(dir, kernellist.Name)
	if err := os.WriteFile(path, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := kernellist.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	err = l.CheckFiles()
	var m *kernellist.MissingFilesError
	if !errors.As(err, &m) || len(m.Missing) != 2 {
		t.Fatalf("CheckFiles: %v", err)
	}
	want := path + " line 3 names kernel-2.traceg, which is not on disk (and 1 more of its kernel lines: line 7 (kernel-6.traceg))"
	if err.Error() != want {
		t.Errorf("CheckFiles:\n got %s\nwant %s", err, want)
	}
	if _, err := kernellist.WriteSubset(l, t.TempDir(), []kernellist.Ref{{ID: 1}, {ID: 6}}); !errors.As(err, &m) || len(m.Missing) != 1 || m.Missing[0].Line != 7 {
		t.Errorf("subset with kernel 6: %v", err)
	}
	if _, err := kernellist.WriteSubset(l, t.TempDir(), []kernellist.Ref{{ID: 1}, {ID: 3}}); err != nil {
		t.Errorf("subset without the missing kernels: %v", err)
	}
}
