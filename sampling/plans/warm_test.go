package plans_test

import (
	"bufio"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// Warming by a synthetic kernel (CASCADE_BENCH_WARMING=1): before a
// segment's first kernel the simulator runs kernelwarm.traceg (Accel-Sim
// reads a kernelslist line as a kernel only when it begins "kernel"), a kernel that
// loads every 128-byte line the segment's kernels touch that a launch
// before the segment touched too. In the full simulation those lines sit
// in L2 (the tested configs flush L1 between kernels, not L2); in a
// segment they would be cold, and a step of warm-up does not bring back
// what an earlier, larger launch left (an attention whose grid grew since
// the prefill). MemcpyHtoD lines do not warm L2 in this build: a kernel
// after a copy of its whole footprint misses as often as without it.
const warmFile = "kernelwarm.traceg"

// lineShift is log2 of the L2 line size of the tested configs (128 B).
const lineShift = 7

// footprints caches each kernel trace's lines by path.
var footprints sync.Map

// footprint is the set of lines the post-processed kernel trace at path
// loads or stores: each memory instruction's active lanes' addresses (the
// three address modes of formats.md §3), its width added.
func footprint(path string) (map[uint64]struct{}, error) {
	if v, ok := footprints.Load(path); ok {
		return v.(map[uint64]struct{}), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines := map[uint64]struct{}{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		t := sc.Text()
		if t == "" || t[0] == '-' || t[0] == '#' || strings.HasPrefix(t, "thread block") || strings.HasPrefix(t, "warp") || strings.HasPrefix(t, "insts") {
			continue
		}
		if err := instLines(strings.Fields(t), lines); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	footprints.Store(path, lines)
	return lines, nil
}

// instLines adds the lines of one instruction (PC mask dest_num [dests]
// opcode src_num [srcs] mem_width [mode addrs..] [immediate]).
func instLines(fs []string, lines map[uint64]struct{}) error {
	if len(fs) < 5 {
		return nil
	}
	mask, err := strconv.ParseUint(fs[1], 16, 32)
	if err != nil {
		return fmt.Errorf("mask %q", fs[1])
	}
	i := 2
	nd, err := strconv.Atoi(fs[i])
	if err != nil {
		return fmt.Errorf("dest count %q", fs[i])
	}
	i += 1 + nd + 1 // dests, opcode
	if i >= len(fs) {
		return fmt.Errorf("short line")
	}
	ns, err := strconv.Atoi(fs[i])
	if err != nil {
		return fmt.Errorf("source count %q", fs[i])
	}
	i += 1 + ns
	if i >= len(fs) {
		return fmt.Errorf("short line")
	}
	width, err := strconv.Atoi(fs[i])
	if err != nil || width <= 0 || i+2 >= len(fs) {
		return nil // no memory operand
	}
	mode, _ := strconv.Atoi(fs[i+1])
	active := bits.OnesCount32(uint32(mask))
	add := func(a uint64) {
		for l := a >> lineShift; l <= (a+uint64(width)-1)>>lineShift; l++ {
			lines[l] = struct{}{}
		}
	}
	addr := func(s string) (uint64, error) { return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64) }
	switch mode {
	case 0:
		for j := 0; j < active && i+2+j < len(fs); j++ {
			a, err := addr(fs[i+2+j])
			if err != nil {
				return fmt.Errorf("address %q", fs[i+2+j])
			}
			add(a)
		}
	case 1:
		base, err := addr(fs[i+2])
		if err != nil || i+3 >= len(fs) {
			return fmt.Errorf("base-stride %q", fs[i+2])
		}
		stride, err := strconv.ParseInt(fs[i+3], 10, 64)
		if err != nil {
			return fmt.Errorf("stride %q", fs[i+3])
		}
		for j := range active {
			add(uint64(int64(base) + int64(j)*stride))
		}
	case 2:
		a, err := addr(fs[i+2])
		if err != nil {
			return fmt.Errorf("base %q", fs[i+2])
		}
		add(a)
		for j := 1; j < active && i+2+j < len(fs); j++ {
			d, err := strconv.ParseInt(fs[i+2+j], 10, 64)
			if err != nil {
				return fmt.Errorf("delta %q", fs[i+2+j])
			}
			a = uint64(int64(a) + d)
			add(a)
		}
	}
	return nil
}

// warmLines are the lines to warm before a segment of refs: those its
// kernels touch that a launch of list before its first one touched.
func warmLines(list *kernellist.List, dir string, refs []kernellist.Ref) ([]uint64, error) {
	first := refs[0]
	seg := map[uint64]struct{}{}
	for _, r := range refs {
		fp, err := footprint(filepath.Join(dir, fmt.Sprintf("kernel-%d.traceg", r.ID)))
		if err != nil {
			return nil, err
		}
		for l := range fp {
			seg[l] = struct{}{}
		}
	}
	warm := map[uint64]struct{}{}
	for _, k := range list.Kernels() {
		if k.Kernel.Context == first.Context && k.Kernel.ID >= first.ID {
			break
		}
		fp, err := footprint(filepath.Join(dir, fmt.Sprintf("kernel-%d.traceg", k.Kernel.ID)))
		if err != nil {
			return nil, err
		}
		for l := range fp {
			if _, ok := seg[l]; ok {
				warm[l] = struct{}{}
			}
		}
	}
	out := make([]uint64, 0, len(warm))
	for l := range warm {
		out = append(out, l)
	}
	slices.Sort(out)
	return out, nil
}

// writeWarm writes warm.traceg into dir: blocks of 32 warps, each warp
// loading up to 8 line pairs (256 bytes, a 64-bit load a lane) into
// distinct registers, so that nothing orders its loads.
func writeWarm(dir string, lines []uint64) error {
	// Line pairs: a load covers lines 2k and 2k+1.
	var pairs []uint64
	for _, l := range lines {
		if p := l &^ 1; len(pairs) == 0 || pairs[len(pairs)-1] != p {
			pairs = append(pairs, p)
		}
	}
	const perWarp, warps = 8, 32
	blocks := max((len(pairs)+perWarp*warps-1)/(perWarp*warps), 1)
	f, err := os.Create(filepath.Join(dir, warmFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "-kernel name = cascade_warm\n-kernel id = 0\n-grid dim = (%d,1,1)\n-block dim = (1024,1,1)\n-shmem = 0\n-nregs = 24\n-binary version = 61\n-cuda stream id = 0\n-shmem base_addr = 0x00007f32f1000000\n-local mem base_addr = 0x00007f32ef000000\n-nvbit version = 1.5.3\n-accelsim tracer version = 3\n\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n", blocks)
	next := 0
	for b := range blocks {
		fmt.Fprintf(w, "\n#BEGIN_TB\n\nthread block = %d,0,0\n\n", b)
		for wp := range warps {
			var insts []string
			for j := 0; j < perWarp && next < len(pairs); j++ {
				insts = append(insts, fmt.Sprintf("%04x ffffffff 1 R%d LDG.E.64 1 R2 8 1 0x%x 8 ", 0x10+8*j, 4+2*j, pairs[next]<<lineShift))
				next++
			}
			insts = append(insts, fmt.Sprintf("%04x ffffffff 0 EXIT 0 0 ", 0x10+8*perWarp))
			fmt.Fprintf(w, "warp = %d\ninsts = %d\n%s\n\n", wp, len(insts), strings.Join(insts, "\n"))
		}
		fmt.Fprintf(w, "#END_TB\n")
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// addWarm puts warm.traceg before the first kernel of dir's kernelslist.g.
func addWarm(dir string) error {
	path := filepath.Join(dir, kernellist.Name)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []string
	done := false
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if !done && strings.HasPrefix(l, "kernel") {
			out = append(out, warmFile)
			done = true
		}
		out = append(out, l)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}
