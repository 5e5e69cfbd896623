package posttraces

import (
	"encoding/binary"
	"math"
)

// The field scanners of checkInst. Raw traces run to hundreds of
// gigabytes, so each reads its field in one pass, without allocating, and
// the long ones (opcodes, addresses) 8 bytes a step.

// fieldSep holds the bytes istream's >> skips between fields (C isspace).
var fieldSep = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// Word-at-a-time tests of 8 bytes, little-endian.
const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// word returns the 8 bytes of b at i, which must be in b.
func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// noSep reports whether no byte of w is 0x20 or below, so none is white
// space (every fieldSep byte is).
func noSep(w uint64) bool { return (w-0x21*ones)&^w&high == 0 }

// allHex reports whether every byte of w is a hex digit.
func allHex(w uint64) bool {
	if w&high != 0 {
		return false
	}
	// Bytes below 0x80: adding keeps each in its byte, and its high bit
	// says whether the byte reached a bound.
	digit := (w + (0x80-'0')*ones) &^ (w + (0x7f-'9')*ones)
	l := w | 0x20*ones // A-F to a-f
	letter := (l + (0x80-'a')*ones) &^ (l + (0x7f-'f')*ones)
	return (digit|letter)&high == high
}

func isHexDigit(c byte) bool {
	return c-'0' <= 9 || (c|0x20)-'a' <= 'f'-'a'
}

// skip returns the offset of the first byte at b[i:] that is not white
// space.
func skip(b []byte, i int) int {
	for i < len(b) && fieldSep[b[i]] {
		i++
	}
	return i
}

// field returns the field at b[i:] after any white space, and the offset
// after it; at the line's end the field is empty.
func field(b []byte, i int) ([]byte, int) {
	i = skip(b, i)
	start := i
	for i+8 <= len(b) && noSep(word(b, i)) {
		i += 8
	}
	for i < len(b) && !fieldSep[b[i]] {
		i++
	}
	return b[start:i], i
}

// ended reports whether a field that reached b[i] ends there.
func ended(b []byte, i int) bool { return i == len(b) || fieldSep[b[i]] }

// rest returns the field at b[start:] whose scan stopped at i, in full,
// and the offset after it.
func rest(b []byte, start, i int) ([]byte, int) {
	for i < len(b) && !fieldSep[b[i]] {
		i++
	}
	return b[start:i], i
}

// A num says what a field read as a number is.
type num uint8

const (
	notNum num = iota // not a number of its kind
	isNum             // one, its value read
	bigNum            // a number too large for 64 bits
)

// digitsAt reads the decimal digits at b[i:]: their value (wrapped past
// 64 bits: the callers check the longer ones) and the offset after them.
func digitsAt(b []byte, i int) (uint64, int) {
	var v uint64
	for i < len(b) && b[i]-'0' <= 9 {
		v = v*10 + uint64(b[i]-'0')
		i++
	}
	return v, i
}

// decField reads the unsigned decimal field at b[i:] after white space:
// the field, the offset after it, its value and what it is.
func decField(b []byte, i int) ([]byte, int, uint64, num) {
	i = skip(b, i)
	start := i
	v, i := digitsAt(b, i)
	if i == start || !ended(b, i) {
		t, end := rest(b, start, i)
		return t, end, 0, notNum
	}
	if i-start > 19 { // 19 digits always fit; more may not
		var over bool
		if v, over, _ = decimal(b[start:i]); over {
			return b[start:i], i, v, bigNum
		}
	}
	return b[start:i], i, v, isNum
}

// intField reads the field at b[i:] after white space as a decimal
// integer, with an optional sign, and reports whether a signed integer of
// size bits holds it; with the field and the offset after it.
func intField(b []byte, i int, size uint) ([]byte, int, bool) {
	i = skip(b, i)
	start := i
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	digits := i
	v, i := digitsAt(b, i)
	if i == digits || !ended(b, i) {
		t, end := rest(b, start, i)
		return t, end, false
	}
	if i-digits > 18 { // 18 digits always fit 63 bits; more may not
		return b[start:i], i, fitsInt(b[start:i], size)
	}
	limit := uint64(1) << (size - 1)
	return b[start:i], i, v < limit || neg && v == limit
}

// regField reads the field at b[i:] after white space as a register as
// the tracer writes one (R%d) and the parser reads it, R and a number an
// int holds, and reports whether it is one; with the field and the
// offset after it.
func regField(b []byte, i int) ([]byte, int, bool) {
	i = skip(b, i)
	start := i
	if i == len(b) || b[i] != 'R' {
		t, end := rest(b, start, i)
		return t, end, false
	}
	i++
	var v uint64
	for i < len(b) && b[i]-'0' <= 9 && v <= math.MaxInt32 {
		v = v*10 + uint64(b[i]-'0')
		i++
	}
	if i == start+1 || !ended(b, i) || v > math.MaxInt32 {
		t, end := rest(b, start, i)
		return t, end, false
	}
	return b[start:i], i, true
}

// hexField reads the field at b[i:] after white space as a hex number of
// at most 64 bits, with or without 0x, as istream's >> std::hex reads the
// tracer's addresses, and reports whether it is one; with the field and
// the offset after it.
func hexField(b []byte, i int) ([]byte, int, bool) {
	i = skip(b, i)
	start := i
	if i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x' {
		i += 2
	}
	digits := i
	for i+8 <= len(b) && allHex(word(b, i)) {
		i += 8
	}
	for i < len(b) && isHexDigit(b[i]) {
		i++
	}
	if i == digits || !ended(b, i) {
		t, end := rest(b, start, i)
		return t, end, false
	}
	ok := true
	if i-digits > 16 { // only leading zeros may make it longer
		ok = isHex64(b[digits:i])
	}
	return b[start:i], i, ok
}

// decimal reads an unsigned decimal field: ok when it is all digits, over
// when its value does not fit 64 bits.
func decimal(t []byte) (v uint64, over, ok bool) {
	if len(t) == 0 {
		return 0, false, false
	}
	for _, c := range t {
		d := uint64(c - '0')
		if d > 9 {
			return 0, false, false
		}
		if v > (math.MaxUint64-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	return v, over, true
}

// fitsInt reports whether t is a decimal integer with an optional sign
// that a signed integer of size bits holds.
func fitsInt(t []byte, size uint) bool {
	neg := false
	if len(t) > 0 && (t[0] == '-' || t[0] == '+') {
		neg, t = t[0] == '-', t[1:]
	}
	v, over, ok := decimal(t)
	limit := uint64(1) << (size - 1)
	return ok && !over && (v < limit || neg && v == limit)
}

// isHex64 reports whether t is a hex number of at most 64 bits, with or
// without 0x.
func isHex64(t []byte) bool {
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	if !isHex(t) {
		return false
	}
	for len(t) > 1 && t[0] == '0' {
		t = t[1:]
	}
	return len(t) <= 16
}

// hex32 reads an 8-digit hex mask, a word at once.
func hex32(t []byte) (uint32, bool) {
	if len(t) != 8 {
		return 0, false
	}
	w := binary.LittleEndian.Uint64(t)
	if hexRun(w) != 8 {
		return 0, false
	}
	// Each byte's value: its low 4 bits, and 9 more for a letter (bit 6).
	v := w&0x0f0f0f0f0f0f0f0f + (w>>6&ones)*9
	// The first byte is the most significant digit: pack pairs, then
	// pairs of pairs, then the two halves.
	v = (v<<4 | v>>8) & 0x00ff00ff00ff00ff
	v = (v<<8 | v>>16) & 0x0000ffff0000ffff
	v = (v<<16 | v>>32) & 0xffffffff
	return uint32(v), true
}
