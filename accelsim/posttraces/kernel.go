package posttraces

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// kernel is one raw trace after the partitioning pass.
type kernel struct {
	name    string // trace file name, for messages
	header  []byte // header lines, each with '\n'
	kname   string // its header's -kernel name, "" without one
	version int    // its header's -accelsim tracer version, 0 without one
	grid    [3]uint32
	block   [3]uint32
	layout  int
	warps   uint64 // warps per block: ceil(threads / 32)
	nblocks uint64
	insts   uint64 // instruction lines read
	parts   *partSet
}

// slots returns the keys per block: one for the block's info, one per warp.
func (k *kernel) slots() uint64 { return k.warps + 1 }

// infoSize is the payload of a block-info record: tb xyz, cluster id xyz,
// cluster cta xyz, cluster rank.
const infoSize = 40

// blockSet remembers which blocks have been seen, in 8 KB pages so that a
// huge sparse grid costs only what ran.
type blockSet struct {
	pages    map[uint64]*[1024]uint64
	lastIdx  uint64
	lastPage *[1024]uint64
}

// add marks block b and reports whether it was new.
func (s *blockSet) add(b uint64) bool {
	idx := b >> 16
	pg := s.lastPage
	if pg == nil || idx != s.lastIdx {
		if s.pages == nil {
			s.pages = map[uint64]*[1024]uint64{}
		}
		pg = s.pages[idx]
		if pg == nil {
			pg = new([1024]uint64)
			s.pages[idx] = pg
		}
		s.lastIdx, s.lastPage = idx, pg
	}
	w, bit := (b>>6)&1023, uint64(1)<<(b&63)
	if pg[w]&bit != 0 {
		return false
	}
	pg[w] |= bit
	return true
}

// maxBlockThreads is the most threads a CUDA thread block holds (every
// compute capability since 2.0), and maxBlockZ the most along z.
const (
	maxBlockThreads = 1024
	maxBlockZ       = 64
)

// checkBlock refuses a -block dim no CUDA kernel can have: a corrupt one
// sized the post-processor's per-warp partitions by it (4294967295
// threads took every byte of memory there was).
func checkBlock(b [3]uint32) error {
	threads := uint64(b[0]) * uint64(b[1]) * uint64(b[2])
	if threads > maxBlockThreads || b[2] > maxBlockZ {
		return fmt.Errorf("block (%d,%d,%d) of %d threads: a CUDA thread block holds at most %d, and %d along z", b[0], b[1], b[2], threads, maxBlockThreads, maxBlockZ)
	}
	return nil
}

// headerValue returns what follows the '=' of a header line, trimmed.
func headerValue(line []byte) string {
	_, v, _ := bytes.Cut(line, []byte{'='})
	return string(bytes.TrimSpace(v))
}

// headerVersion reads "-accelsim tracer version = N" as Accel-Sim's
// sscanf does: the number after the '=', 0 when there is none.
func headerVersion(line []byte) int {
	_, v, _ := bytes.Cut(line, []byte{'='})
	v = bytes.TrimLeft(v, " \t")
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' || n > 1<<20 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// checkVersion refuses a kernel whose header names no tracer version of 3
// or later (0: no "-accelsim tracer version" line, or no number in it).
// Accel-Sim reads the post-processed trace by that header: below 3 it
// takes each instruction line to begin with the thread block's ids,
// which post-processing moves to the block's header, and it would
// misread every instruction (trace_parser.cc, parse_from_string).
func checkVersion(v int) error {
	switch {
	case v == 0:
		return errors.New(`the header has no "-accelsim tracer version = N" line with a number before the first instruction: Accel-Sim reads such a trace as tracer version 0, whose lines begin with the thread block's ids, and would misread every instruction once post-processed; trace it with Accel-Sim's tracer, which writes the line (version 3 or later)`)
	case v < 3:
		return fmt.Errorf("-accelsim tracer version = %d: Accel-Sim reads a post-processed trace of tracer version 3 or later only (below 3 it expects the thread block's ids on every instruction line); trace it with a newer Accel-Sim tracer", v)
	}
	return nil
}

// lineError names a trace file and line.
func lineError(file string, line int, err error) error {
	return fmt.Errorf("%s:%d: %w", file, line, err)
}

// partition reads the raw trace at path and spreads its instruction lines
// over spill partitions in dir, keyed by block and warp.
func (p *processor) partition(ctx context.Context, path, dir string) (_ *kernel, err error) {
	name := path
	rc, err := openTrace(ctx, path, p.xz)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			// Named once, as a kernel trace (one removed while it was
			// processed: "no such file or directory").
			return nil, fmt.Errorf("kernel trace %s: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer rc.Close()
	sizeHint := int64(0)
	if st, err := os.Stat(path); err == nil {
		sizeHint = st.Size()
		if strings.HasSuffix(path, ".xz") {
			sizeHint *= 10
		}
	}

	k := &kernel{name: name}
	defer func() {
		if err != nil && k.parts != nil {
			k.parts.release()
		}
	}()
	lr := newLineReader(rc)
	var (
		ids      lineIDs
		seen     blockSet
		info     [infoSize]byte
		gotGrid  bool
		gotBlock bool
		gx, gxy  uint64
		imm      bool // instruction lines may end in an immediate
	)
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) || errors.Is(err, errNoNewline) {
			return nil, lineError(name, lr.num, err)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s (after line %d): %w", path, lr.num, err)
		}
		if len(line) == 0 || line[0] == '-' || line[0] == '#' {
			if k.parts != nil && len(line) == 0 {
				continue // blank lines between instructions carry nothing
			}
			if bytes.IndexByte(line, 0) >= 0 {
				// A .tracez header ends at its first NUL, so one inside would
				// cut it short; no tracer writes one.
				return nil, lineError(name, lr.num, errors.New("NUL byte in a header line"))
			}
			k.header = append(append(k.header, line...), '\n')
			if k.parts == nil && len(line) > 0 && line[0] == '-' {
				switch {
				case bytes.HasPrefix(line, []byte("-grid dim")):
					if k.grid, err = dim3(line); err != nil {
						return nil, lineError(name, lr.num, err)
					}
					gotGrid = true
				case bytes.HasPrefix(line, []byte("-block dim")):
					if k.block, err = dim3(line); err != nil {
						return nil, lineError(name, lr.num, err)
					}
					if err := checkBlock(k.block); err != nil {
						return nil, lineError(name, lr.num, err)
					}
					gotBlock = true
				case bytes.HasPrefix(line, []byte("-kernel name")):
					k.kname = headerValue(line)
				case bytes.HasPrefix(line, []byte("-accelsim tracer version")):
					k.version = headerVersion(line)
				}
			}
			continue
		}
		if k.parts == nil {
			if !gotGrid || !gotBlock {
				return nil, lineError(name, lr.num, errors.New("instruction line before the -grid dim and -block dim header lines"))
			}
			if k.layout, err = detectLayout(line); err != nil {
				return nil, lineError(name, lr.num, err)
			}
			if err := checkVersion(k.version); err != nil {
				return nil, lineError(name, lr.num, err)
			}
			// Tracer versions up to 3 write no immediate; 4 began to.
			imm = k.version >= 4
			gx, gxy = uint64(k.grid[0]), uint64(k.grid[0])*uint64(k.grid[1])
			k.nblocks = gxy * uint64(k.grid[2])
			threads := uint64(k.block[0]) * uint64(k.block[1]) * uint64(k.block[2])
			k.warps = (threads + 31) / 32
			if k.nblocks > 1<<40 {
				return nil, lineError(name, lr.num, fmt.Errorf("grid of %d blocks is too large", k.nblocks))
			}
			n, bufCap := p.partitionShape(sizeHint)
			k.parts = newPartSet(dir, 0, k.nblocks*k.slots(), n, bufCap, true)
		}
		if !parseIDs(line, k.layout, &ids) {
			return nil, lineError(name, lr.num, fmt.Errorf("%w; this file's first instruction line has %d", errLayout, k.layout))
		}
		x, y, z, w := uint64(ids.v[0]), uint64(ids.v[1]), uint64(ids.v[2]), uint64(ids.v[3])
		if x >= uint64(k.grid[0]) || y >= uint64(k.grid[1]) || z >= uint64(k.grid[2]) {
			return nil, lineError(name, lr.num, fmt.Errorf("thread block (%d,%d,%d) outside grid (%d,%d,%d)", x, y, z, k.grid[0], k.grid[1], k.grid[2]))
		}
		if w >= k.warps {
			return nil, lineError(name, lr.num, fmt.Errorf("warp %d outside a block of %d warps", w, k.warps))
		}
		if !fastInst(line, ids.fields, ids.mask, imm) {
			if err := checkInst(line, ids.fields, ids.mask, imm, k.version); err != nil {
				return nil, lineError(name, lr.num, err)
			}
		}
		b := z*gxy + y*gx + x
		base := b * k.slots()
		if seen.add(b) {
			binary.LittleEndian.PutUint32(info[0:], ids.v[0])
			binary.LittleEndian.PutUint32(info[4:], ids.v[1])
			binary.LittleEndian.PutUint32(info[8:], ids.v[2])
			for i := 0; i < 7; i++ {
				binary.LittleEndian.PutUint32(info[12+4*i:], ids.v[4+i]) // zero for the 4-id layout
			}
			if err := k.parts.add(base, info[:]); err != nil {
				return nil, err
			}
		}
		if err := k.parts.add(base+1+w, line[ids.rest:]); err != nil {
			return nil, err
		}
		k.insts++
		if k.insts&0xFFFF == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if k.parts == nil {
		if !gotGrid || !gotBlock {
			return nil, fmt.Errorf("%s: no -grid dim / -block dim header", name)
		}
		// A kernel without instructions: every block is empty.
		k.nblocks = uint64(k.grid[0]) * uint64(k.grid[1]) * uint64(k.grid[2])
		k.warps = (uint64(k.block[0])*uint64(k.block[1])*uint64(k.block[2]) + 31) / 32
		k.layout = layoutClassic
		k.parts = newPartSet(dir, 0, 1, 1, 0, false)
	}
	if err := k.parts.settle(); err != nil {
		return nil, err
	}
	return k, nil
}

// partitionShape picks the number of partitions and their buffer size from
// the expected raw size: partitions of a few megabytes, buffers summing to
// at most partBufTotal.
func (p *processor) partitionShape(sizeHint int64) (int, int) {
	n := int(min(max(sizeHint/p.targetPart, 16), 1024))
	return n, p.bufCap(n)
}

// bufCap is the buffer of each of n partitions: their sum stays under
// partBufTotal, and a buffer never exceeds a quarter of what a partition
// may hold in memory, so that small test limits exercise the spill files.
func (p *processor) bufCap(n int) int {
	c := max(min(partBufTotal/n, 256<<10), 16<<10)
	return int(min(int64(c), p.maxPartMem/4+1))
}
