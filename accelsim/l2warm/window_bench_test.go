package l2warm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
)

// BenchmarkWindows: the warming windows of a 20,000-launch trace's 400
// segments (a plan's traceRanges), on kernels of 64 lines from a set of
// 6,400, so that no window fills a 6 MB L2 and each walks back to the
// list's start: the worst case, every footprint read once (no cache
// directory) and walked over 8 million times.
func BenchmarkWindows(b *testing.B) {
	dir := b.TempDir()
	const n = 20000
	var list strings.Builder
	for i := 1; i <= n; i++ {
		var ls []string
		base := uint64((i % 100) * 64)
		for l := base; l < base+64; l++ {
			ls = append(ls, fmt.Sprintf("0010 00000001 1 R2 LDG.E 1 R4 4 0 0x%x", l<<l2warm.LineShift))
		}
		ls = append(ls, "0020 00000001 0 EXIT 0 0")
		var t strings.Builder
		t.WriteString(header(3) + "\n#traces format = ...\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\n")
		fmt.Fprintf(&t, "insts = %d\n%s\n\n#END_TB\n", len(ls), strings.Join(ls, "\n"))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("kernel-%d.traceg", i)), []byte(t.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&list, "kernel-%d.traceg\n", i)
	}
	path := filepath.Join(dir, "kernelslist.g")
	if err := os.WriteFile(path, []byte(list.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := kernellist.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		c := l2warm.NewCache("")
		var starts []kernellist.Ref
		for s := 50; s <= n; s += 50 {
			starts = append(starts, kernellist.Ref{ID: s})
		}
		if _, _, err := l2warm.Windows(c, src, starts, 6<<20); err != nil {
			b.Fatal(err)
		}
	}
}
