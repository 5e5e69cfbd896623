package l2warm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/l2warm"
)

// BenchmarkFootprint: the footprint of a 100 MB post-processed kernel
// trace of 2,000,000 warp loads of 32 lanes (address mode 1) over 100,000
// lines, as the L2 warming reads each kernel of a segment's window.
func BenchmarkFootprint(b *testing.B) {
	p := filepath.Join(b.TempDir(), "kernel-1.traceg")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	var t strings.Builder
	t.WriteString(header(3) + "\n#traces format = ...\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\n")
	const n = 2000000
	fmt.Fprintf(&t, "insts = %d\n", n)
	for i := range n {
		fmt.Fprintf(&t, "%04x ffffffff 1 R2 LDG.E 1 R4 4 1 0x%x 4\n", 16*(i%1000), (uint64(i%100000))<<l2warm.LineShift)
	}
	t.WriteString("\n#END_TB\n")
	if _, err := f.WriteString(t.String()); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(t.Len()))
	b.ResetTimer()
	for range b.N {
		fp, err := l2warm.Footprint(p)
		if err != nil || fp.Touched.Count() != 100000 {
			b.Fatalf("%d lines, %v", fp.Touched.Count(), err)
		}
	}
}
