package posttraces

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Instruction-line layouts: how many decimal ids lead each line.
const (
	layoutClassic = 4  // cta x y z, warp
	layoutCluster = 11 // … plus cluster id xyz, cluster cta xyz, cluster rank
)

// errLayout is returned for a line that fits neither layout.
var errLayout = errors.New("instruction line fits neither layout (4 or 11 leading ids before hex PC and 8-digit hex mask)")

// lineIDs are the leading ids of one instruction line, and what
// parseIDs read of its instruction.
type lineIDs struct {
	v      [layoutCluster]uint32
	rest   int    // offset of the instruction (the PC) in the line
	mask   uint32 // the active-lane mask
	fields int    // offset of dest_num, the field after the mask
}

// parseUint reads a decimal uint32 at b[i:], stopping at a space; it returns
// the value and the offset after the number and its separating spaces.
func parseUint(b []byte, i int) (uint32, int, bool) {
	start := i
	var v uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + uint64(b[i]-'0')
		if v > 0xFFFFFFFF {
			return 0, i, false
		}
		i++
	}
	if i == start || (i < len(b) && b[i] != ' ') {
		return 0, i, false
	}
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return uint32(v), i, true
}

// token returns the space-delimited token at b[i:] and the offset after it
// and its trailing spaces.
func token(b []byte, i int) ([]byte, int) {
	start := i
	for i < len(b) && b[i] != ' ' {
		i++
	}
	tok := b[start:i]
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return tok, i
}

func isHex(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// parseIDs reads n leading ids of line and checks that a hex PC and an
// 8-digit hex mask follow them.
func parseIDs(line []byte, n int, ids *lineIDs) bool {
	i := 0
	for k := 0; k < n; k++ {
		v, j, ok := parseUint(line, i)
		if !ok {
			return false
		}
		ids.v[k], i = v, j
	}
	ids.rest = i
	pc, j := token(line, i)
	if !isHex(pc) {
		return false
	}
	mask, j := token(line, j)
	m, ok := hex32(mask)
	if !ok {
		return false
	}
	ids.mask, ids.fields = m, j
	// dest_num must be a decimal count.
	d, _ := token(line, j)
	if len(d) == 0 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// detectLayout decides the layout from a file's first instruction line.
func detectLayout(line []byte) (int, error) {
	var ids lineIDs
	four := parseIDs(line, layoutClassic, &ids)
	eleven := parseIDs(line, layoutCluster, &ids)
	switch {
	case four && !eleven:
		return layoutClassic, nil
	case eleven && !four:
		return layoutCluster, nil
	case four && eleven:
		return 0, errors.New("instruction line fits both layouts (4 and 11 leading ids)")
	}
	return 0, errLayout
}

// isLDGSTS reports whether the instruction (a line without its leading ids)
// is an LDGSTS*: PC, mask, dest_num, dest_num registers, then the opcode.
func isLDGSTS(inst []byte) bool {
	_, i := token(inst, 0)
	_, i = token(inst, i)
	d, i := token(inst, i)
	n, err := strconv.Atoi(string(d)) // no allocation: the conversion does not escape
	if err != nil {
		return false
	}
	for k := 0; k < n && i < len(inst); k++ { // dest_num may be any number: stop at the line's end
		_, i = token(inst, i)
	}
	op, _ := token(inst, i)
	return bytes.Contains(op, []byte("LDGSTS"))
}

// dim3 parses "(x,y,z)" from a header line such as "-grid dim = (98,1,1)".
func dim3(line []byte) ([3]uint32, error) {
	var d [3]uint32
	open, end := bytes.IndexByte(line, '('), bytes.IndexByte(line, ')')
	if open < 0 || end < open {
		return d, fmt.Errorf("no (x,y,z) in %q", line)
	}
	parts := bytes.Split(line[open+1:end], []byte{','})
	if len(parts) != 3 {
		return d, fmt.Errorf("no (x,y,z) in %q", line)
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(string(bytes.TrimSpace(p)), 10, 32)
		if err != nil || v == 0 {
			return d, fmt.Errorf("bad dimension in %q", line)
		}
		d[i] = uint32(v)
	}
	return d, nil
}
