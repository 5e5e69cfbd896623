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
	fields   [][]byte          // scratch
	ops      map[string]opInfo // what each opcode met so far does
}

// opInfo is what an opcode says of its memory accesses.
type opInfo struct {
	shared, write bool
	width         int
}

// op reads opcode op, once for each opcode of a trace.
func (h *header) op(op []byte) opInfo {
	if o, ok := h.ops[string(op)]; ok {
		return o
	}
	o := opInfo{shared: sharedOp(op), write: writeOp(op), width: opcodeWidth(op)}
	if h.ops == nil {
		h.ops = map[string]opInfo{}
	}
	h.ops[string(op)] = o
	return o
}

// appendFields appends line's space-separated fields to fs, as
// bytes.Fields finds them (ASCII spaces and tabs), without allocating a
// new slice for each line.
func appendFields(fs [][]byte, line []byte) [][]byte {
	start := -1
	for i, c := range line {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' {
			if start >= 0 {
				fs = append(fs, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		fs = append(fs, line[start:])
	}
	return fs
}

// parseHex reads a hexadecimal number, with or without 0x.
func parseHex(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 {
		return 0, false
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(c)
	}
	return n, true
}

// parseDec reads a decimal number with an optional sign.
func parseDec(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
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
	fs := appendFields(h.fields[:0], line)
	h.fields = fs
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
		n, ok := parseDec(f)
		if !ok || n < 0 || n > 64 {
			return 0, fmt.Errorf("%s %q is not a count", what, f)
		}
		return int(n), nil
	}
	if _, err := field(); err != nil { // PC
		return err
	}
	m, err := field()
	if err != nil {
		return fmt.Errorf("mask: %w", err)
	}
	mask, ok := parseHex(m)
	if !ok || mask > 0xffffffff || len(m) > 1 && m[1]|0x20 == 'x' { // the mask has no 0x

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
	memWidth, ok := parseDec(wf)
	if !ok {
		return fmt.Errorf("mem_width %q is not a number", wf)
	}
	o := h.op(op)
	if memWidth <= 0 || o.shared {
		return nil
	}
	width := o.width
	add := func(a uint64, width int) {
		bs.touched.add(a, width)
		if o.write {
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
		a, ok := parseHex(f)
		if !ok {
			return 0, fmt.Errorf("%s %q is not hex", what, f)
		}
		return a, nil
	}
	dec := func(what string) (int64, error) {
		f, err := field()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		d, ok := parseDec(f)
		if !ok {
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
