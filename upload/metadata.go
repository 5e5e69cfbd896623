package upload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// File is one entry of metadata.json's files list: a path relative to the
// trace directory, slash-separated, and its size in bytes.
type File struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// field is one top-level member of a JSON object, kept verbatim so that
// re-encoding changes nothing the uploader did not mean to change (key order,
// number spelling, nested layout).
type field struct {
	key   string
	value json.RawMessage
}

// metadata is a decoded metadata.json in its original key order.
type metadata struct {
	fields []field
}

// parseMetadata decodes a metadata.json object. Errors name the line and
// column so a user can find a typo in a hand-edited file. A byte order
// mark is taken off first, as the server does (tracedir.TrimBOM): the
// file is accepted, and an error placed, as the server would.
func parseMetadata(data []byte) (*metadata, error) {
	data = tracedir.TrimBOM(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	m := &metadata{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(data, dec, err)
		}
		key := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(data, dec, err)
		}
		m.set(key, raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, jsonError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the object", lineCol(data, dec.InputOffset()))
	}
	return m, nil
}

// jsonError adds a line and column to a decoding error. The streaming
// decoder's offsets are relative to the value it was reading, so the whole
// document is checked again to find where it breaks.
func jsonError(data []byte, dec *json.Decoder, err error) error {
	var v any
	var syn *json.SyntaxError
	if errors.As(json.Unmarshal(data, &v), &syn) {
		return fmt.Errorf("%s: %s", lineCol(data, syn.Offset), syn)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%s: unexpected end of file", lineCol(data, int64(len(data))))
	}
	return fmt.Errorf("%s: %w", lineCol(data, dec.InputOffset()), err)
}

// lineCol names the place of byte offset off as the server does when it
// reads the same file (tracedir.LineCol): one place, one answer.
func lineCol(data []byte, off int64) string {
	line, col := tracedir.LineCol(data, max(off, 0))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// get returns the raw value of key, or nil.
func (m *metadata) get(key string) json.RawMessage {
	for _, f := range m.fields {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

// set replaces key's value in place, or appends the key. A duplicated key
// keeps its first position and its last value, as encoding/json reads it.
func (m *metadata) set(key string, value json.RawMessage) {
	for i := range m.fields {
		if m.fields[i].key == key {
			m.fields[i].value = value
			return
		}
	}
	m.fields = append(m.fields, field{key, value})
}

// runName returns metadata.json's run_name, or "" when there is none.
func (m *metadata) runName() (string, error) {
	raw := m.get("run_name")
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("run_name: want a string, have %s", raw)
	}
	return s, nil
}

// encode writes the object indented by two spaces, with one files entry a
// line so that a list of thousands of kernels stays readable.
func (m *metadata) encode(files []File) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range m.fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		key, _ := json.Marshal(f.key)
		b.Write(key)
		b.WriteString(": ")
		if f.key == "files" {
			writeFiles(&b, files)
			continue
		}
		if err := writeValue(&b, f.value); err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// compactWidth is the longest value kept on its key's line: [0, 1] and a
// short prompt list read better on one line than spread over several.
const compactWidth = 72

func writeValue(b *bytes.Buffer, value json.RawMessage) error {
	var c bytes.Buffer
	if err := json.Compact(&c, value); err != nil {
		return err
	}
	if c.Len() <= compactWidth {
		b.Write(c.Bytes())
		return nil
	}
	return json.Indent(b, value, "  ", "  ")
}

func writeFiles(b *bytes.Buffer, files []File) {
	if len(files) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[")
	for i, f := range files {
		if i > 0 {
			b.WriteString(",")
		}
		p, _ := json.Marshal(f.Path) // a string always encodes
		fmt.Fprintf(b, "\n    {\"path\": %s, \"size\": %d}", p, f.Size)
	}
	b.WriteString("\n  ]")
}

// filesList reads a files list as written by this package or by
// scripts/upload_trace.py. ok is false when there is none or it is not a
// list of {path, size}.
func (m *metadata) filesList() (files []File, ok bool) {
	raw := m.get("files")
	if raw == nil {
		return nil, false
	}
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, false
	}
	return files, true
}

// serverCheck reads m as the server will (tracedir.ParseMetadata), its
// files list aside (the upload writes its own): a value of the wrong type
// ("model": 5) is refused here, naming the field, rather than failing the
// trace once every file is uploaded.
func (m *metadata) serverCheck() error {
	raw := make(map[string]json.RawMessage, len(m.fields))
	for _, f := range m.fields {
		if f.key != "files" {
			raw[f.key] = f.value
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if _, err := tracedir.ParseMetadata(b); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), tracedir.MetadataFile+": "))
	}
	return nil
}
