package tracedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The timing files are JSON written by hand or by other people's scripts,
// so they are read leniently and entry by entry: a bad entry is named
// ("rows[3]: kernel_id: want an integer, got a string") and skipped, and
// only a file that is not the expected list at all is an error. The
// helpers below are that reading.

// notJSON names the line and column of a JSON syntax error in data.
func notJSON(data []byte, err error) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		line, col := LineCol(data, syntax.Offset)
		return fmt.Errorf("not JSON: line %d, column %d: %w", line, col, err)
	}
	return fmt.Errorf("not JSON: %w", err)
}

// jsonFields reads typed fields of one JSON object; each accessor reports
// whether the field is present (null counts as absent) and, when it has
// the wrong type, a reason naming it. Its fields are kept in file order
// (the last of a name wins, as encoding/json's); the values are slices of
// the object's bytes, not copies.
type jsonFields struct{ fields []jsonField }

type jsonField struct {
	name  string
	value json.RawMessage
}

// jsonObject reads raw, valid JSON, as an object; false when it is none.
// A timing file's entries are read by the million, so the common shape,
// keys without escapes, is split by hand rather than decoded into a map.
func jsonObject(raw json.RawMessage) (jsonFields, bool) {
	if f, ok := splitObject(raw); ok {
		return f, true
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return jsonFields{}, false
	}
	var f jsonFields
	for k, v := range obj {
		f.fields = append(f.fields, jsonField{k, v})
	}
	return f, true
}

// splitObject splits valid JSON raw, an object whose keys hold no escape,
// into its fields; false for anything else (jsonObject then decodes it).
func splitObject(raw []byte) (jsonFields, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return jsonFields{}, false
	}
	f := jsonFields{fields: make([]jsonField, 0, 8)}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return f, true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return jsonFields{}, false
		}
		end := bytes.IndexByte(raw[i+1:], '"')
		if end < 0 {
			return jsonFields{}, false
		}
		key := raw[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return jsonFields{}, false
		}
		i = skipSpace(raw, i+2+end)
		if i >= len(raw) || raw[i] != ':' {
			return jsonFields{}, false
		}
		i = skipSpace(raw, i+1)
		vend, ok := skipValue(raw, i)
		if !ok {
			return jsonFields{}, false
		}
		f.fields = append(f.fields, jsonField{fieldName(key), raw[i:vend]})
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return jsonFields{}, false
		}
		switch raw[i] {
		case '}':
			return f, true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return jsonFields{}, false
		}
	}
	return jsonFields{}, false
}

// fieldName is key as a string, the timing files' own names without
// allocating one per entry.
func fieldName(key []byte) string {
	switch string(key) {
	case "kernel_id":
		return "kernel_id"
	case "kernel_name":
		return "kernel_name"
	case "context":
		return "context"
	case "duration_ns":
		return "duration_ns"
	case "cycles":
		return "cycles"
	case "invocation":
		return "invocation"
	case "name":
		return "name"
	case "kind":
		return "kind"
	case "start_ns":
		return "start_ns"
	case "step":
		return "step"
	case "event":
		return "event"
	}
	return string(key)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the object or list holding it
				return i, true
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i, true
			}
		}
	}
	if depth == 0 {
		return i, true
	}
	return 0, false
}

// names returns the object's field names, in file order.
func (f jsonFields) names() []string {
	out := make([]string, 0, len(f.fields))
	for _, fl := range f.fields {
		out = append(out, fl.name)
	}
	return out
}

func (f jsonFields) get(name string) (json.RawMessage, bool) {
	for i := len(f.fields) - 1; i >= 0; i-- {
		if f.fields[i].name == name {
			return f.fields[i].value, true
		}
	}
	return nil, false
}

// isNull reports whether the field is there and null.
func (f jsonFields) isNull(name string) bool {
	raw, ok := f.get(name)
	return ok && string(bytes.TrimSpace(raw)) == "null"
}

func (f jsonFields) raw(name string) (json.RawMessage, bool) {
	v, _ := f.get(name)
	raw := bytes.TrimSpace(v)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

func (f jsonFields) string(name string) (string, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return "", false, ""
	}
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true, ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, name + ": want a string, got " + jsonKind(raw)
	}
	return s, true, ""
}

func (f jsonFields) int(name string) (int64, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return 0, false, ""
	}
	n, ok := numberLit(raw)
	if !ok {
		return 0, false, name + ": want an integer, got " + jsonKind(raw)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, false, name + ": want an integer, got " + n.String()
	}
	return i, true, ""
}

// numberLit returns raw, valid JSON, as a number literal; false when it
// is another value (a string "12" is not a number).
func numberLit(raw json.RawMessage) (json.Number, bool) {
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return "", false
	}
	return json.Number(raw), true
}

// nanos is a JSON number kept exact when it is an integer: timestamps in
// nanoseconds pass 2^53, beyond which float64 loses whole nanoseconds.
type nanos struct {
	i     int64
	f     float64
	exact bool
}

// sub gives a - b, exactly when both are integers and the difference
// fits in an int64.
func (a nanos) sub(b nanos) float64 {
	if d := a.i - b.i; a.exact && b.exact && (d >= 0) == (a.i >= b.i) { // and not overflowed
		return float64(d)
	}
	return a.f - b.f
}

func (f jsonFields) number(name string) (nanos, bool, string) {
	raw, ok := f.raw(name)
	if !ok {
		return nanos{}, false, ""
	}
	n, ok := numberLit(raw)
	if !ok {
		return nanos{}, false, name + ": want a number, got " + jsonKind(raw)
	}
	v, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(v, 0) {
		return nanos{}, false, name + ": want a number, got " + n.String()
	}
	out := nanos{f: v}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		out.i, out.exact = i, true
	}
	return out, true, ""
}

// jsonKind names what raw is, for a reason: "a string", "a list", or the
// number itself.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	}
	return string(raw)
}
