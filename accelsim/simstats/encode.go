package simstats

import (
	"encoding/binary"
	"errors"
	"math"
)

// A kernel's values are stored as one small blob: per value a tag byte,
// then nothing (absent), a zigzag varint (a whole number, as most
// counters are), or the 8 bytes of a float64. A kernel of 40 counters
// takes about 100 bytes, where 40 rows or float64s would take far more.
const (
	tagAbsent = 0
	tagInt    = 1
	tagFloat  = 2
)

// Encode appends v's encoding to dst.
func Encode(dst []byte, v Values) []byte {
	for _, f := range v {
		switch {
		case !Present(f):
			dst = append(dst, tagAbsent)
		case f == math.Trunc(f) && math.Abs(f) < 1<<53:
			dst = append(dst, tagInt)
			dst = binary.AppendVarint(dst, int64(f))
		default:
			dst = append(dst, tagFloat)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
		}
	}
	return dst
}

// ErrCorrupt is returned by Decode for bytes Encode did not write.
var ErrCorrupt = errors.New("simstats: corrupt encoded values")

// Decode reads values that Encode wrote.
func Decode(b []byte) (Values, error) {
	var v Values
	for len(b) > 0 {
		tag := b[0]
		b = b[1:]
		switch tag {
		case tagAbsent:
			v = append(v, Absent)
		case tagInt:
			n, k := binary.Varint(b)
			if k <= 0 {
				return nil, ErrCorrupt
			}
			v = append(v, float64(n))
			b = b[k:]
		case tagFloat:
			if len(b) < 8 {
				return nil, ErrCorrupt
			}
			v = append(v, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		default:
			return nil, ErrCorrupt
		}
	}
	return v, nil
}
