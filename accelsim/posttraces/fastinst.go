package posttraces

import "math/bits"

// fastInst is checkInst's fast path: it reports whether the fields at
// line[i:] are as the tracer writes them — single spaces between fields
// (one more at the end, or none), counts of one digit, registers and
// strides of at most 9 digits, addresses of at most 16 hex digits, deltas
// and immediates of at most 18 — in a form checkInst accepts. A false says
// only that checkInst must decide (and name the field). Its loops are
// written out or inlined (fastReg), not called: a line of 32 addresses
// or deltas would pay a call a field, more than the field's own bytes
// cost.
func fastInst(b []byte, i int, mask uint32, imm bool) bool {
	n := len(b)
	// dest_num and its register.
	if i+1 >= n || b[i+1] != ' ' {
		return false
	}
	switch b[i] {
	case '0':
		i += 2
	case '1':
		var ok bool
		if i, ok = fastReg(b, i+2); !ok {
			return false
		}
	default:
		return false
	}
	// The opcode: anything but white space (or another control byte).
	start := i
	for i+8 <= n && noSep(word(b, i)) {
		i += 8
	}
	for i < n && b[i] > ' ' {
		i++
	}
	if i == start || i+2 >= n || b[i] != ' ' || b[i+2] != ' ' {
		return false
	}
	// src_num and its registers.
	src := b[i+1] - '0'
	if src > maxSrcRegs {
		return false
	}
	i += 3
	for range src {
		var ok bool
		if i, ok = fastReg(b, i); !ok {
			return false
		}
	}
	// mem_width.
	start = i
	width := 0
	for i < n && b[i]-'0' <= 9 {
		width = width*10 + int(b[i]-'0')
		i++
	}
	if i == start || i-start > 3 {
		return false
	}
	// The address mode and the addresses, each field after a space.
	if width > 0 {
		if i+2 >= n || b[i] != ' ' || b[i+2] != ' ' {
			return false
		}
		mode := b[i+1]
		i += 2
		if mode > '2' || mode < '0' {
			return false
		}
		lanes := bits.OnesCount32(mask)
		hexes, ints, digits := lanes, 0, 0
		switch mode {
		case '1':
			hexes, ints, digits = 1, 1, 9 // base, stride: 9 digits fit 32 bits
		case '2':
			hexes, ints, digits = 1, lanes-1, 18 // base, deltas: 18 digits fit 64 bits
		}
		for range hexes {
			// " 0x" and up to 16 digits, in three words.
			if i+19 <= n && word(b, i)&0xffffff|0x200000 == 0x783020 {
				r := hexRun(word(b, i+3))
				if r == 8 {
					r += hexRun(word(b, i+11))
				}
				if r == 0 || r == 16 && i+19 < n && isHexDigit(b[i+19]) {
					return false
				}
				i += 3 + r
				continue
			}
			if i >= n || b[i] != ' ' {
				return false
			}
			i++
			if i+1 < n && b[i] == '0' && b[i+1]|0x20 == 'x' {
				i += 2
			}
			start := i
			for i+8 <= n {
				r := hexRun(word(b, i))
				if i += r; r < 8 {
					break
				}
			}
			for i < n && isHexDigit(b[i]) {
				i++
			}
			if i == start || i-start > 16 {
				return false
			}
		}
		for range ints {
			// A space, a minus perhaps, and up to 7 digits, in one word.
			if i+9 <= n && b[i] == ' ' {
				w, neg := word(b, i+1), 0
				if byte(w) == '-' {
					w, neg = w>>8, 1
				}
				if r := digitRun(w); r > 0 && r < 8 {
					i += 1 + neg + r
					continue
				}
			}
			if i >= n || b[i] != ' ' {
				return false
			}
			i++
			if i < n && b[i] == '-' {
				i++
			}
			start := i
			if i+8 <= n {
				i += digitRun(word(b, i)) // a delta's digits are few: one word
			}
			for i < n && b[i]-'0' <= 9 {
				i++
			}
			if i == start || i-start > digits {
				return false
			}
		}
	}
	// The end, or a space and the end, or (where it may be) a space and
	// the immediate.
	if i == n || i+1 == n && b[i] == ' ' {
		return true
	}
	if !imm || b[i] != ' ' {
		return false
	}
	i++
	if i < n && b[i] == '-' {
		i++
	}
	start = i
	for i < n && b[i]-'0' <= 9 {
		i++
	}
	if i == start || i-start > 18 {
		return false
	}
	return i == n || i+1 == n && b[i] == ' '
}

// hexRun returns how many of w's bytes, from its first (lowest), are hex
// digits: 8 when all are. The lowest byte that is not is found exactly:
// the bytes below it are digits, so no carry reaches it.
func hexRun(w uint64) int {
	digit := (w + (0x80-'0')*ones) &^ (w + (0x7f-'9')*ones)
	l := w | 0x20*ones // A-F to a-f
	letter := (l + (0x80-'a')*ones) &^ (l + (0x7f-'f')*ones)
	return bits.TrailingZeros64((^(digit|letter)|w)&high) >> 3
}

// digitRun returns how many of w's bytes, from its first, are decimal
// digits, as hexRun does.
func digitRun(w uint64) int {
	digit := (w + (0x80-'0')*ones) &^ (w + (0x7f-'9')*ones)
	return bits.TrailingZeros64((^digit|w)&high) >> 3
}

// fastReg reads a register as the tracer writes it at b[i:], "R" and at
// most 9 digits then a space, and returns the offset after the space.
func fastReg(b []byte, i int) (int, bool) {
	n := len(b)
	if i >= n || b[i] != 'R' {
		return i, false
	}
	i++
	start := i
	for i < n && b[i]-'0' <= 9 {
		i++
	}
	if i == start || i-start > 9 || i >= n || b[i] != ' ' {
		return i, false
	}
	return i + 1, true
}
