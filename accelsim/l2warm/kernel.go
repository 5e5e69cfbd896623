package l2warm

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/ulikunitz/xz"
)

// KernelName is the warming kernel's name in its trace header, and
// TraceBase the base of its trace file's name (kernelwarm.traceg or
// kernelwarm.tracez). Accel-Sim takes a kernel list line for a kernel only
// when it starts with "kernel"; the name is no kernel-<id> trace name, so
// nothing mistakes it for one of the trace's launches.
const (
	KernelName = "cascade_l2_warm"
	TraceBase  = "kernelwarm"
)

// IsTrace reports whether a kernel list line or trace path names the
// warming kernel.
func IsTrace(path string) bool {
	base := filepath.Base(filepath.FromSlash(strings.TrimSpace(path)))
	return base == TraceBase+".traceg" || base == TraceBase+".tracez"
}

// Warp shape of the warming kernel: each warp issues up to opsPerWarp
// coalesced accesses, each into registers of its own so that nothing
// orders them, in blocks of warpsPerBlock warps. An access covers two
// lines (a lane 8 bytes, LDG.E.64/STG.E.64) when two lines of the same
// kind follow each other, one (a lane 4 bytes) otherwise.
const (
	opsPerWarp    = 8
	warpsPerBlock = 32
)

// access is one warp's access of the warming kernel.
type access struct {
	line  uint64 // the first line
	two   bool   // lines line and line+1
	store bool
}

// accesses are the accesses that warm w's lines, oldest first: a load of
// a clean line, a store of a dirty one.
func accesses(w Warm) []access {
	var out []access
	var pending *access
	for _, g := range w.Order {
		for _, s := range g {
			for l := s.Lo; l < s.Hi; l++ {
				dirty := w.Dirty.Has(l)
				if pending != nil && !pending.two && pending.line+1 == l && pending.store == dirty {
					pending.two = true
					continue
				}
				out = append(out, access{line: l, store: dirty})
				pending = &out[len(out)-1]
			}
		}
	}
	return out
}

// inst is the trace line of access a, the j-th of its warp.
func (a access) inst(j int) string {
	op, width := "E", 4
	if a.two {
		op, width = "E.64", 8
	}
	if a.store {
		return fmt.Sprintf("%04x ffffffff 0 STG.%s 2 R2 R%d %d 1 0x%x %d", 0x10+8*j, op, 4+2*j, width, a.line<<LineShift, width)
	}
	return fmt.Sprintf("%04x ffffffff 1 R%d LDG.%s 1 R2 %d 1 0x%x %d", 0x10+8*j, 4+2*j, op, width, a.line<<LineShift, width)
}

// WriteKernel writes into dir the warming kernel that loads w's clean
// lines and stores to its dirty ones, oldest first, in the format of like
// (the segment's first kernel trace: .tracez gives kernelwarm.tracez,
// anything else kernelwarm.traceg), with like's binary version so the
// simulator decodes it as it decodes the segment. It returns the file's
// name (relative to dir); "" and no file when w has no lines.
func WriteKernel(dir string, w Warm, like string) (string, error) {
	accs := accesses(w)
	if len(accs) == 0 {
		return "", nil
	}
	hdr, err := likeHeader(like)
	if err != nil {
		return "", err
	}
	blocks := (len(accs) + opsPerWarp*warpsPerBlock - 1) / (opsPerWarp * warpsPerBlock)
	var head strings.Builder
	fmt.Fprintf(&head, "-kernel name = %s\n-kernel id = 0\n-grid dim = (%d,1,1)\n-block dim = (%d,1,1)\n-shmem = 0\n-nregs = %d\n-binary version = %s\n-cuda stream id = 0\n-shmem base_addr = %s\n-local mem base_addr = %s\n-nvbit version = %s\n-accelsim tracer version = 3\n",
		KernelName, blocks, 32*warpsPerBlock, 4+2*opsPerWarp, hdr["binary version"], hdr["shmem base_addr"], hdr["local mem base_addr"], hdr["nvbit version"])
	warp := func(b, wp int) []string {
		var insts []string
		for j := range opsPerWarp {
			k := (b*warpsPerBlock+wp)*opsPerWarp + j
			if k >= len(accs) {
				break
			}
			insts = append(insts, accs[k].inst(j))
		}
		return append(insts, fmt.Sprintf("%04x ffffffff 0 EXIT 0 0", 0x10+8*opsPerWarp))
	}
	if strings.HasSuffix(like, ".tracez") {
		name := TraceBase + ".tracez"
		return name, writeZ(filepath.Join(dir, name), head.String(), blocks, warp)
	}
	name := TraceBase + ".traceg"
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriter(f)
	bw.WriteString(head.String())
	bw.WriteString("\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n")
	for b := range blocks {
		fmt.Fprintf(bw, "\n#BEGIN_TB\n\nthread block = %d,0,0\n\n", b)
		for wp := range warpsPerBlock {
			insts := warp(b, wp)
			fmt.Fprintf(bw, "warp = %d\ninsts = %d\n%s\n\n", wp, len(insts), strings.Join(insts, "\n"))
		}
		bw.WriteString("#END_TB\n")
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return "", err
	}
	return name, f.Close()
}

func writeZ(path, head string, blocks int, warp func(b, wp int) []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	enc, err := tracez.NewEncoder(tracez.DefaultSubchunkInsts, 1)
	if err != nil {
		return err
	}
	tw, err := tracez.NewWriter(f, []byte(head), enc.SubchunkInsts(), filepath.Dir(path))
	if err != nil {
		return err
	}
	var frames, scratch []byte
	for b := range blocks {
		if err := tw.BeginBlock(tracez.BlockHeader{TB: [3]uint32{uint32(b), 0, 0}}); err != nil {
			return err
		}
		for wp := range warpsPerBlock {
			insts := warp(b, wp)
			lines := make([][]byte, len(insts))
			for i, s := range insts {
				lines[i] = []byte(s)
			}
			frames, scratch = enc.AppendWarp(frames[:0], scratch, lines)
			if err := tw.WriteWarp(uint64(len(insts)), frames); err != nil {
				return err
			}
		}
		if err := tw.EndBlock(); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// likeHeader reads the header fields of the trace at path that the
// warming kernel copies, with defaults for those it lacks.
func likeHeader(path string) (map[string]string, error) {
	h := map[string]string{"binary version": "", "shmem base_addr": "0x00007f0000000000", "local mem base_addr": "0x00007e0000000000", "nvbit version": "1.5.3"}
	var text string
	if strings.HasSuffix(path, ".tracez") {
		r, err := tracez.Open(path)
		if err != nil {
			return nil, err
		}
		text = string(r.Header)
		r.Close()
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(path, ".xz") {
			if r, err = xz.NewReader(bufio.NewReader(f)); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		var b strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() && (sc.Text() == "" || sc.Text()[0] == '-') {
			b.WriteString(sc.Text() + "\n")
		}
		text = b.String()
	}
	for l := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "-"), "=")
		if _, want := h[strings.TrimSpace(k)]; ok && want && strings.TrimSpace(v) != "" {
			h[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if h["binary version"] == "" {
		return nil, fmt.Errorf("%s: no -binary version in its header", path)
	}
	return h, nil
}
