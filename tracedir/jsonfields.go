package tracedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The timing files are JSON written by hand or by other people's scripts,
// so they are read leniently and entry by entry: a bad entry is named
// ("rows[3]: kernel_id: want an integer, got a string") and skipped, and
// only a file that is not the expected list at all is an error. The
// helpers below are that reading.

// jsonTopList returns the entries of a JSON list that is either the whole
// document or the field key of a top-level object, with the path prefix
// naming where the list sits.
func jsonTopList(data []byte, key string) ([]json.RawMessage, string, error) {
	var list []json.RawMessage
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, "", notJSON(data, err)
		}
		raw, ok := obj[key]
		if !ok {
			return nil, "", fmt.Errorf("an object without %q", key)
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, "", fmt.Errorf("%s: want a list", key)
		}
		return list, key, nil
	}
	if err := json.Unmarshal(data, &list); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, "", notJSON(data, err)
		}
		return nil, "", fmt.Errorf("want a list or an object with %q", key)
	}
	return list, "", nil
}

// listEntryOffset returns the byte offset in data of entry index of the
// list jsonTopList reads (the document, or its field key), for its line;
// 0 when it cannot tell.
func listEntryOffset(data []byte, key string, index int) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return 0
	}
	if tok == json.Delim('{') {
		for {
			k, err := dec.Token()
			if err != nil || k == json.Delim('}') {
				return 0
			}
			if k == key {
				if tok, err = dec.Token(); err != nil {
					return 0
				}
				break
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
		}
	}
	if tok != json.Delim('[') {
		return 0
	}
	for i := 0; dec.More(); i++ {
		if i == index {
			off := dec.InputOffset()
			for off < int64(len(data)) && bytes.IndexByte([]byte(", \t\r\n"), data[off]) >= 0 {
				off++
			}
			return off
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0
		}
	}
	return 0
}

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
// the wrong type, a reason naming it.
type jsonFields struct{ obj map[string]json.RawMessage }

// jsonObject reads raw as an object; false when it is none.
func jsonObject(raw json.RawMessage) (jsonFields, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return jsonFields{}, false
	}
	return jsonFields{obj}, true
}

func (f jsonFields) raw(name string) (json.RawMessage, bool) {
	raw := bytes.TrimSpace(f.obj[name])
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
	var n json.Number
	// json.Number also takes "12" in quotes: a string is not an integer.
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return 0, false, name + ": want an integer, got " + jsonKind(raw)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, false, name + ": want an integer, got " + n.String()
	}
	return i, true, ""
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
	var n json.Number
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
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
