package kernellist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// BenchmarkWriteSubsetSplit: the kernel list of one of two segments of a
// split run of a 20,000-launch trace of two contexts (10,000 launches a
// context, a copy before every tenth kernel): 10,000 kernels chosen, with
// their contexts, as a split run's segment chooses them. Each kernel's
// trace file is linked into the run directory.
func BenchmarkWriteSubsetSplit(b *testing.B) {
	const perCtx = 10000
	dir := b.TempDir()
	ctxs := []string{"0x1", "0x2"}
	var list strings.Builder
	var chosen []kernellist.Ref
	for c, ctx := range ctxs {
		for id := 1; id <= perCtx; id++ {
			if id%10 == 1 {
				fmt.Fprintf(&list, "MemcpyHtoD,0x%x,4096\n", c*perCtx+id)
			}
			name := fmt.Sprintf("kernel-%d-ctx_%s.traceg", id, ctx)
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				b.Fatal(err)
			}
			list.WriteString(name + "\n")
			if c*perCtx+id > perCtx/2 && len(chosen) < perCtx {
				chosen = append(chosen, kernellist.Ref{ID: id, Context: ctx})
			}
		}
	}
	path := filepath.Join(dir, kernellist.Name)
	if err := os.WriteFile(path, []byte(list.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := kernellist.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	run := b.TempDir()
	b.ResetTimer()
	for range b.N {
		out, err := kernellist.WriteSubset(src, run, chosen)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(out.Kernels()); n != len(chosen) {
			b.Fatalf("%d kernels written, %d chosen", n, len(chosen))
		}
	}
}
