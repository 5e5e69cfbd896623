package tracedir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// The timing files can be hundreds of MB (a real_timing.json of millions
// of rows, a timeline of thousands of steps), so they are read as a
// stream, one entry at a time: at no point is the whole file, or a tree
// of all its values, in memory.

// bom is the UTF-8 byte order mark Windows editors start a file with; the
// timing files are read without it, as metadata.json is (TrimBOM).
var bom = []byte("\xef\xbb\xbf")

// streamList calls fn with each entry of the JSON list that is either the
// whole document in r or the field key of a top-level object, with its
// index and the byte offset where it starts; prefix names where the list
// sits (key, or "" for the document). A document that is not such a list
// is an error, as jsonTopList's; a syntax error names its line and column
// (r is read again from the start to place it). fn returning false stops
// the stream early, without an error.
func streamList(r io.ReadSeeker, key string, fn func(i int, off int64, raw json.RawMessage) bool) (prefix string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if b, _ := br.Peek(len(bom)); bytes.Equal(b, bom) {
		br.Discard(len(bom))
	}
	dec := json.NewDecoder(br)
	// Numbers as they are written: a top-level 1E700 is no float64, and
	// the stream's error for it named no place.
	dec.UseNumber()
	syntax := func(err error, base int64) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return placeSyntaxError(r, base+se.Offset, err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return placeSyntaxError(r, -1, errors.New("unexpected end of JSON input"))
		}
		// Any other error of a document that is not JSON is its syntax
		// error, placed.
		if bad := invalidJSON(r); bad != nil {
			return bad
		}
		return fmt.Errorf("not JSON: %w", err)
	}
	// A document of the wrong shape that is not JSON either ("000",
	// {"rows": 0000) is not JSON, as a whole-document decode says.
	shape := func(err error) error {
		if bad := invalidJSON(r); bad != nil {
			return bad
		}
		return err
	}
	tok, err := dec.Token()
	if err != nil {
		return "", syntax(err, 0)
	}
	if tok == json.Delim('{') {
		found := false
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return "", syntax(err, 0)
			}
			if k == key && !found {
				found = true
				start := dec.InputOffset()
				if tok, err = dec.Token(); err != nil {
					return "", syntax(err, start)
				}
				if tok != json.Delim('[') {
					return "", shape(fmt.Errorf("%s: want a list", key))
				}
				prefix = key
				if err := streamEntries(dec, fn, syntax); err != nil {
					return "", err
				}
				continue
			}
			start := dec.InputOffset()
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", syntax(err, start)
			}
		}
		if _, err := dec.Token(); err != nil {
			return "", syntax(err, 0)
		}
		if !found {
			return "", shape(fmt.Errorf("an object without %q", key))
		}
	} else if tok != json.Delim('[') {
		return "", shape(fmt.Errorf("want a list or an object with %q", key))
	} else if err := streamEntries(dec, fn, syntax); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return "", placeSyntaxError(r, dec.InputOffset(), errors.New("invalid character after top-level value"))
		}
		return "", syntax(err, 0)
	}
	return prefix, nil
}

// errStop stops streamEntries when fn asks to.
var errStop = errors.New("stop")

// streamEntries reads the entries of a list whose '[' dec has read, and
// its ']'.
func streamEntries(dec *json.Decoder, fn func(int, int64, json.RawMessage) bool, syntax func(error, int64) error) error {
	for i := 0; dec.More(); i++ {
		before := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntax(err, before)
		}
		if !fn(i, dec.InputOffset()-int64(len(raw)), raw) {
			return nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntax(err, 0)
	}
	return nil
}

// placeSyntaxError names the line and column of a JSON syntax error in
// the document r holds. The stream's offsets are not always the
// document's (encoding/json counts a value's from its start), so r is
// read again, from the start, and the whole document checked to find
// where it breaks; off (-1: unknown) is used only when that finds none.
func placeSyntaxError(r io.ReadSeeker, off int64, err error) error {
	if _, serr := r.Seek(0, io.SeekStart); serr == nil {
		if data, rerr := io.ReadAll(r); rerr == nil {
			data = bytes.TrimPrefix(data, bom)
			var v json.RawMessage
			if uerr := json.Unmarshal(data, &v); uerr != nil {
				return notJSON(data, uerr)
			}
			if off >= 0 {
				line, col := LineCol(data, off)
				return fmt.Errorf("not JSON: line %d, column %d: %w", line, col, err)
			}
		}
	}
	return fmt.Errorf("not JSON: %w", err)
}

// invalidJSON is the syntax error of the document r holds, placed; nil
// when it is valid JSON. It reads r from the start.
func invalidJSON(r io.ReadSeeker) error {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil
	}
	data = bytes.TrimPrefix(data, bom)
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return notJSON(data, err)
	}
	return nil
}

// lineAt returns the line of byte offset off (counted after a byte order
// mark) of the document r holds, reading it again from the start.
func lineAt(r io.ReadSeeker, off int64) int {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if b, _ := br.Peek(len(bom)); bytes.Equal(b, bom) {
		br.Discard(len(bom))
	}
	line := 1
	buf := make([]byte, 1<<16)
	for off > 0 {
		n, err := br.Read(buf[:min(int64(len(buf)), off)])
		line += bytes.Count(buf[:n], []byte{'\n'})
		off -= int64(n)
		if err != nil {
			break
		}
	}
	return line
}

// streamFile is streamList over the file at path; its errors name what
// was read ("read real timing: ...") or the file.
func streamFile(path, what, key string, fn func(i int, off int64, raw json.RawMessage) bool) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	prefix, err := streamList(f, key, fn)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return prefix, nil
}
