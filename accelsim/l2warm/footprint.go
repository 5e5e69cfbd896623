package l2warm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/ulikunitz/xz"
)

// Print is a kernel's footprint: the lines it touches, and of those the
// lines it writes (stores, reductions and atomics), which a write-back L2
// holds dirty after it.
type Print struct{ Touched, Written Lines }

// Footprint is the lines the post-processed kernel trace at path (.traceg,
// .traceg.xz or .tracez) touches and writes: every active lane's address of each
// memory instruction, read as Accel-Sim's trace parser reads it
// (formats.md §3: address mode 0 lists the active lanes' addresses, 1 is a
// base and a stride over the first run of active lanes, 2 a base and
// deltas), its access width added. The width is the one the simulator
// uses, from the opcode (".64" → 8 bytes, 4 by default), not the traced
// mem_width, which the simulator does not trust. Shared-memory
// instructions (LDS, STS, LDSM, ATOMS) never reach L2 and are left out.
// Tracer versions 3 and 4+ (a trailing immediate) are read alike; a
// header's "-enable lineinfo = 1" puts a line number first. Memory stays
// bounded whatever the kernel's size: lines are folded into spans as
// they come. A line it cannot read is an error naming the file and line
// (for .tracez, the block, warp and instruction).
func Footprint(path string) (Print, error) {
	if strings.HasSuffix(path, ".tracez") {
		return footprintZ(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return Print{}, err
	}
	defer f.Close()
	// The scanner reads a plain file in its own buffer's chunks; a
	// buffer of a megabyte more would be allocated (and cleared) for
	// every kernel, most of them small. The xz reader wants one.
	var r io.Reader = f
	if strings.HasSuffix(path, ".xz") {
		if r, err = xz.NewReader(bufio.NewReaderSize(f, 1<<20)); err != nil {
			return Print{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	var b builders
	var h header
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case '-':
			h.line(string(line))
			continue
		case '#':
			continue
		}
		if bytes.Contains(line, []byte(" = ")) { // thread block, warp, insts, cluster lines
			continue
		}
		if err := h.inst(line, &b); err != nil {
			return Print{}, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Print{}, fmt.Errorf("%s: after line %d: %w", path, n, err)
	}
	return b.print(), nil
}

// builders collect a kernel's touched and written lines.
type builders struct{ touched, written builder }

func (b *builders) print() Print {
	return Print{Touched: b.touched.lines(), Written: b.written.lines()}
}

func footprintZ(path string) (Print, error) {
	r, err := tracez.Open(path)
	if err != nil {
		return Print{}, err
	}
	defer r.Close()
	var h header
	for l := range strings.SplitSeq(string(r.Header), "\n") {
		h.line(l)
	}
	var b builders
	for bi, blk := range r.Blocks {
		for wi, w := range blk.Warps {
			i := 0
			err := r.Insts(w, func(line []byte) error {
				i++
				if len(bytes.TrimSpace(line)) == 0 {
					return nil
				}
				if err := h.inst(line, &b); err != nil {
					return fmt.Errorf("%s: block %d (%d,%d,%d) warp %d instruction %d: %v", path, bi, blk.TB[0], blk.TB[1], blk.TB[2], wi, i, err)
				}
				return nil
			})
			if err != nil {
				return Print{}, err
			}
		}
	}
	return b.print(), nil
}

// header is what of a trace's header changes how its lines read.
type header struct {
	version  int // -accelsim tracer version; 0 when absent
	lineinfo bool
	fields   [][]byte // scratch
}

func (h *header) line(l string) {
	k, v, ok := strings.Cut(strings.TrimPrefix(l, "-"), "=")
	if !ok {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return
	}
	switch strings.TrimSpace(k) {
	case "accelsim tracer version":
		h.version = n
	case "enable lineinfo":
		h.lineinfo = n != 0
	}
}

var errShort = errors.New("line ends early")

// inst adds the lines of one instruction line:
// [line_num] PC mask dest_num [dests] opcode src_num [srcs] mem_width [mode addrs..] [immediate].
func (h *header) inst(line []byte, bs *builders) error {
	fs := bytes.Fields(line)
	i := 0
	if h.version > 0 && h.version < 3 {
		i += 4 // block and warp ids, as the parser reads them
	}
	if h.lineinfo {
		i++
	}
	field := func() ([]byte, error) {
		if i >= len(fs) {
			return nil, errShort
		}
		i++
		return fs[i-1], nil
	}
	count := func(what string) (int, error) {
		f, err := field()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		n, err := strconv.Atoi(string(f))
		if err != nil || n < 0 || n > 64 {
			return 0, fmt.Errorf("%s %q is not a count", what, f)
		}
		return n, nil
	}
	if _, err := field(); err != nil { // PC
		return err
	}
	m, err := field()
	if err != nil {
		return fmt.Errorf("mask: %w", err)
	}
	mask, err := strconv.ParseUint(string(m), 16, 32)
	if err != nil {
		return fmt.Errorf("mask %q is not hex", m)
	}
	nd, err := count("dest count")
	if err != nil {
		return err
	}
	i += nd
	op, err := field()
	if err != nil {
		return fmt.Errorf("opcode: %w", err)
	}
	ns, err := count("source count")
	if err != nil {
		return err
	}
	i += ns
	wf, err := field()
	if err != nil {
		return fmt.Errorf("mem_width: %w", err)
	}
	width, err := strconv.Atoi(string(wf))
	if err != nil {
		return fmt.Errorf("mem_width %q is not a number", wf)
	}
	if width <= 0 || sharedOp(op) {
		return nil
	}
	width = opcodeWidth(op)
	add := func(a uint64, width int) {
		bs.touched.add(a, width)
		if writeOp(op) {
			bs.written.add(a, width)
		}
	}
	mode, err := count("address mode")
	if err != nil {
		return err
	}
	active := bits.OnesCount32(uint32(mask))
	hex := func(what string) (uint64, error) {
		f, err := field()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(string(f), "0x"), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not hex", what, f)
		}
		return a, nil
	}
	dec := func(what string) (int64, error) {
		f, err := field()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		d, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not a number", what, f)
		}
		return d, nil
	}
	if active == 0 {
		return nil
	}
	switch mode {
	case 0:
		for range active {
			a, err := hex("address")
			if err != nil {
				return err
			}
			add(a, width)
		}
	case 1:
		base, err := hex("base address")
		if err != nil {
			return err
		}
		stride, err := dec("stride")
		if err != nil {
			return err
		}
		// The parser gives addresses to the first run of active lanes only.
		run := bits.TrailingZeros32(^uint32(mask >> bits.TrailingZeros32(uint32(mask))))
		for k := range run {
			add(uint64(int64(base)+int64(k)*stride), width)
		}
	case 2:
		a, err := hex("base address")
		if err != nil {
			return err
		}
		add(a, width)
		for range active - 1 {
			d, err := dec("delta")
			if err != nil {
				return err
			}
			a = uint64(int64(a) + d)
			add(a, width)
		}
	default:
		return fmt.Errorf("address mode %d: want 0, 1 or 2", mode)
	}
	return nil
}

// writeOp reports opcodes that write memory: stores, reductions and
// atomics (read-modify-write).
func writeOp(op []byte) bool {
	base, _, _ := bytes.Cut(op, []byte("."))
	switch string(base) {
	case "ST", "STG", "STL", "RED", "ATOM", "ATOMG":
		return true
	}
	return false
}

// sharedOp reports opcodes whose addresses are in shared memory.
func sharedOp(op []byte) bool {
	base, _, _ := bytes.Cut(op, []byte("."))
	switch string(base) {
	case "LDS", "STS", "LDSM", "ATOMS":
		return true
	}
	return false
}

// opcodeWidth is the access width the simulator takes from an opcode
// (trace_parser.cc get_datawidth_from_opcode): its first numeric part, or
// U<bits>, in bytes; 4 by default.
func opcodeWidth(op []byte) int {
	for p := range bytes.SplitSeq(op, []byte(".")) {
		s := string(p)
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return max(n/8, 1)
		}
		if u, ok := strings.CutPrefix(s, "U"); ok {
			if n, err := strconv.Atoi(u); err == nil && n > 0 {
				return max(n/8, 1)
			}
		}
	}
	return 4
}
