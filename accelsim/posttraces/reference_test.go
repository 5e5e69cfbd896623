package posttraces

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/ulikunitz/xz"
)

// refBlock is a thread block as the naive reference groups it.
type refBlock struct {
	hdr   tracez.BlockHeader
	warps [][]string
}

// readRaw returns a raw trace's text, decompressing .xz.
func readRaw(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".xz") {
		zr, err := xz.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return string(data)
}

// reference groups a raw trace the obvious, all-in-memory way: it is the
// oracle the streaming implementation is checked against.
func reference(t testing.TB, raw string, layout int) (string, []refBlock) {
	t.Helper()
	var (
		header      strings.Builder
		grid, block [3]int
		blocks      map[int]*refBlock
		flags       = map[[2]int]bool{}
		started     bool
	)
	for line := range strings.SplitSeq(strings.TrimSuffix(raw, "\n"), "\n") {
		if line == "" || line[0] == '-' || line[0] == '#' {
			if !started {
				header.WriteString(line + "\n")
			}
			if strings.HasPrefix(line, "-grid dim") {
				fmt.Sscanf(line, "-grid dim = (%d,%d,%d)", &grid[0], &grid[1], &grid[2])
			}
			if strings.HasPrefix(line, "-block dim") {
				fmt.Sscanf(line, "-block dim = (%d,%d,%d)", &block[0], &block[1], &block[2])
			}
			continue
		}
		if !started {
			started, blocks = true, map[int]*refBlock{}
		}
		parts := strings.SplitN(line, " ", layout+1)
		var ids [11]uint32
		for i := 0; i < layout; i++ {
			v, err := strconv.Atoi(parts[i])
			if err != nil {
				t.Fatalf("reference: %q: %v", line, err)
			}
			ids[i] = uint32(v)
		}
		inst := parts[layout]
		id := int(ids[2])*grid[1]*grid[0] + int(ids[1])*grid[0] + int(ids[0])
		b := blocks[id]
		if b == nil {
			nw := (block[0]*block[1]*block[2] + 31) / 32
			b = &refBlock{warps: make([][]string, nw), hdr: tracez.BlockHeader{
				TB: [3]uint32{ids[0], ids[1], ids[2]}, ClusterID: [3]uint32{ids[4], ids[5], ids[6]},
				ClusterCTA: [3]uint32{ids[7], ids[8], ids[9]}, Rank: ids[10]}}
			blocks[id] = b
		}
		f := strings.Fields(inst)
		nd, _ := strconv.Atoi(f[2])
		if strings.Contains(f[3+nd], "LDGSTS") {
			k := [2]int{id, int(ids[3])}
			flags[k] = !flags[k]
			if flags[k] { // odd occurrence: dropped
				continue
			}
		}
		b.warps[ids[3]] = append(b.warps[ids[3]], inst)
	}
	var out []refBlock
	for id := 0; id < grid[0]*grid[1]*grid[2]; id++ {
		if b := blocks[id]; b != nil {
			out = append(out, *b)
		}
	}
	return header.String(), out
}

// renderText renders blocks as .traceg text.
func renderText(header string, blocks []refBlock, cluster bool) string {
	var b strings.Builder
	b.WriteString(header)
	for _, blk := range blocks {
		h := blk.hdr
		fmt.Fprintf(&b, "\n#BEGIN_TB\n\nthread block = %d,%d,%d\n", h.TB[0], h.TB[1], h.TB[2])
		if cluster {
			fmt.Fprintf(&b, "cluster id = %d,%d,%d\ncluster cta = %d,%d,%d\ncluster rank = %d\n",
				h.ClusterID[0], h.ClusterID[1], h.ClusterID[2], h.ClusterCTA[0], h.ClusterCTA[1], h.ClusterCTA[2], h.Rank)
		}
		for w, insts := range blk.warps {
			fmt.Fprintf(&b, "\nwarp = %d\ninsts = %d\n", w, len(insts))
			for _, l := range insts {
				b.WriteString(l + "\n")
			}
		}
		b.WriteString("\n#END_TB\n")
	}
	return b.String()
}

// readTracez reads a .tracez file back into blocks.
func readTracez(t testing.TB, path string) (string, []refBlock) {
	t.Helper()
	r, err := tracez.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []refBlock
	for _, b := range r.Blocks {
		rb := refBlock{hdr: b.BlockHeader}
		for _, w := range b.Warps {
			var insts []string
			if err := r.Insts(w, func(l []byte) error { insts = append(insts, string(l)); return nil }); err != nil {
				t.Fatal(err)
			}
			rb.warps = append(rb.warps, insts)
		}
		out = append(out, rb)
	}
	return string(r.Header), out
}
