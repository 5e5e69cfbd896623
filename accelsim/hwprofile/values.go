package hwprofile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Absent is a value the profile does not have: "n/a", nothing, or text.
var Absent = math.NaN()

// Present reports whether v is a value.
func Present(v float64) bool { return !math.IsNaN(v) }

// errText is a value that is text, not a number ("Low (2)", "(256, 1,
// 1)"): absent, and noted, not an error.
var errText = errors.New("not a number")

// parseValue reads one printed value: thousands separators ("1,024") are
// dropped, a trailing "%" too, and a trailing unit ("126.02GB/s", as
// nvprof prints some metrics) scales the number to base units (ownUnit).
// A comma that is not a thousands separator (a decimal comma, "65,77")
// and dots that are ("27.595.520", another locale's thousands) are
// errors: the number would be read wrong. "" and "n/a" are Absent; other
// text is errText.
func parseValue(b []byte) (v float64, ownUnit bool, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "n/a" || string(b) == "N/A" {
		return Absent, false, nil
	}
	b = bytes.TrimSpace(bytes.TrimSuffix(b, []byte("%")))
	scale := 1.0
	if i := bytes.LastIndexAny(b, "0123456789."); i >= 0 && i+1 < len(b) {
		if f, _, ok := unitFactor(string(b[i+1:])); ok {
			b, scale, ownUnit = b[:i+1], f, true
		}
	}
	if !numberLike(b) {
		return Absent, false, errText
	}
	var scratch [64]byte
	num := b
	if bytes.IndexByte(b, ',') >= 0 {
		var ok bool
		if num, ok = dropThousands(b, scratch[:0]); !ok {
			return 0, false, fmt.Errorf("%q: a comma that is not a thousands separator (a decimal comma?): export in a locale that prints 1,234.5, or with --print-units base", b)
		}
	} else if bytes.Count(b, []byte(".")) > 1 && digitsAndDots(b) {
		return 0, false, fmt.Errorf("%q: dots as thousands separators (another locale's): export in a locale that prints 1,234.5", b)
	}
	v, err = strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return Absent, false, errText
	}
	return v * scale, ownUnit, nil
}

// dropThousands appends to dst b without the commas between its groups
// of three digits; ok is false when a comma is not between such groups.
func dropThousands(b, dst []byte) ([]byte, bool) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		dst, b = append(dst, b[0]), b[1:]
	}
	intPart, frac, hasFrac := bytes.Cut(b, []byte("."))
	if hasFrac && bytes.IndexByte(frac, ',') >= 0 {
		return nil, false
	}
	for i := 0; ; i++ {
		g, rest, more := bytes.Cut(intPart, []byte(","))
		if len(g) == 0 || !allDigits(string(g)) || len(g) > 3 || i > 0 && len(g) != 3 {
			return nil, false
		}
		dst = append(dst, g...)
		if !more {
			break
		}
		intPart = rest
	}
	if hasFrac {
		dst = append(append(dst, '.'), frac...)
	}
	return dst, true
}

// numberLike reports whether s has only what a printed number has.
func numberLike(s []byte) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == ',', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			return false
		}
	}
	return len(s) > 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func digitsAndDots(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

// Base units the values of a column are scaled to: times in nanoseconds,
// sizes in bytes, rates per second.
const (
	unitNanosecond = "nsecond"
	unitByte       = "byte"
)

var timeUnits = map[string]float64{ // → nanoseconds
	"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9,
}

var perTime = map[string]float64{ // x per this → x per second
	"second": 1, "s": 1, "msecond": 1e3, "ms": 1e3, "usecond": 1e6, "us": 1e6, "nsecond": 1e9, "ns": 1e9,
}

// countBases are the units Nsight Compute and nvprof scale with a decimal
// prefix (Kbyte, Mbyte, GB, Ghz).
var countBases = map[string]string{
	"byte": unitByte, "B": unitByte, "sector": "sector", "inst": "inst", "cycle": "cycle",
	"request": "request", "warp": "warp", "thread": "thread", "hz": "hz", "Hz": "hz",
}

var prefixes = map[byte]float64{'K': 1e3, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}

// unitFactor returns what a value printed in unit is multiplied by to be
// in its base unit, and the base unit's name; ok is false for a unit it
// does not know (the value is kept as printed).
func unitFactor(unit string) (f float64, base string, ok bool) {
	if f, ok := timeUnits[unit]; ok {
		return f, unitNanosecond, true
	}
	num, den, rate := strings.Cut(unit, "/")
	nf, nb, ok := countFactor(num)
	if !ok {
		return 1, unit, false
	}
	if !rate {
		return nf, nb, true
	}
	df, ok := perTime[den]
	if !ok {
		return 1, unit, false
	}
	return nf * df, nb + "/second", true
}

func countFactor(u string) (float64, string, bool) {
	if b, ok := countBases[u]; ok {
		return 1, b, true
	}
	if len(u) > 1 {
		if p, ok := prefixes[u[0]]; ok {
			if b, ok := countBases[u[1:]]; ok {
				return p, b, true
			}
		}
	}
	return 1, u, false
}
