package tracedir_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/tracedir"
)

// TestMetadataOddities: what an exploratory pass found a metadata.json
// may hold. A byte order mark is no error; a field of the wrong type says
// what it wants in JSON's words; an architecture that is none, and a
// real_timing outside the trace, are warnings, the first dropped so the
// kernel traces' binary version stands.
func TestMetadataOddities(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		err        string // "": none
		warning    string // "": none
		arch       string // TraceGPUArch kept; "": nil
	}{
		{name: "byte order mark", json: "\xef\xbb\xbf{\"model\": \"m\", \"trace_gpu_arch\": \"sm_90a\"}", arch: "sm_90a"},
		{name: "files not a list", json: `{"files": "nope"}`, err: `metadata.json: files: want a list, got string`},
		{name: "prompts not strings", json: `{"prompts": [1, 2]}`, err: `metadata.json: prompts: want a string, got number`},
		{name: "no architecture", json: `{"trace_gpu_arch": "banana"}`, warning: `trace_gpu_arch: want an architecture such as "sm_90", got "banana"; the kernel traces' binary version is used instead`},
		{name: "sm_ alone", json: `{"trace_gpu_arch": "sm_"}`, warning: `got "sm_"`},
		{name: "real timing outside", json: `{"real_timing": "../base/metadata.json"}`, warning: `real_timing: "../base/metadata.json" is outside the trace`},
		{name: "real timing absolute", json: `{"real_timing": "/etc/passwd"}`, warning: `real_timing: "/etc/passwd" is outside the trace`},
		{name: "real timing inside", json: `{"real_timing": "timing/real.json"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tracedir.ParseMetadata([]byte(tc.json))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			warnings := strings.Join(m.Warnings, "\n")
			if tc.warning == "" && len(m.Warnings) > 0 || tc.warning != "" && !strings.Contains(warnings, tc.warning) {
				t.Errorf("warnings %q, want %q", m.Warnings, tc.warning)
			}
			if got := m.TraceGPUArch; tc.err == "" && (tc.arch == "" && got != nil || tc.arch != "" && (got == nil || *got != tc.arch)) {
				t.Errorf("trace_gpu_arch %v, want %q", got, tc.arch)
			}
		})
	}
}

// TestMetadataTooBig: a metadata.json over MaxMetadataBytes is refused
// with an error naming the file, its size and the limit, without being
// read (the file here is sparse: reading it would take its size in
// memory).
func TestMetadataTooBig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, tracedir.MetadataFile)
	writeFile(t, p, []byte(`{"prompts": ["`))
	if err := os.Truncate(p, tracedir.MaxMetadataBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err := tracedir.ReadMetadata(dir)
	var big *tracedir.MetadataTooBigError
	if !errors.As(err, &big) || big.Size != tracedir.MaxMetadataBytes+1 {
		t.Fatalf("err %v, want a MetadataTooBigError of %d bytes", err, tracedir.MaxMetadataBytes+1)
	}
	for _, s := range []string{"metadata.json", "33554433 bytes", "32 MiB"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	// At the limit it is read.
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, append([]byte(`{"model": "m"}`), bytes.Repeat([]byte(" "), tracedir.MaxMetadataBytes-14)...))
	if m, err := tracedir.ReadMetadata(dir); err != nil || m.Model == nil {
		t.Errorf("a metadata.json of the limit's size: %+v, %v", m, err)
	}
}
