package scanner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestArchitectureFromTheTrace: metadata.json's trace_gpu_arch wins (with a
// warning when the kernel headers contradict it); without
// it the trace's kernel headers say (-binary version = 61 is sm_61, never
// the guide's sm_90 guessed); with neither, sm_90 is assumed and the trace
// says it was. A broken metadata.json is the same as one without the field.
func TestArchitectureFromTheTrace(t *testing.T) {
	const kernel = "-kernel name = _Z6vecAddPdS_S_i\n-binary version = 61\n-cuda stream id = 0\n\n#traces format = ...\n"
	cases := []struct {
		name          string
		meta, kernel  string
		arch, archFrm string
		warning       string // the trace's warning, "" for none
	}{
		{"metadata names it", `{"trace_gpu_arch": "sm_61"}`, kernel, "sm_61", cascade.ArchFromMetadata, ""},
		{"metadata names it, a variant of the headers'", `{"trace_gpu_arch": "sm_61a"}`, kernel, "sm_61a", cascade.ArchFromMetadata, ""},
		// QA: the trace said sm_86 and simulatable, and its runs failed on
		// the binary version the simulator could not decode.
		{"metadata contradicts the headers", `{"trace_gpu_arch": "sm_86"}`, kernel, "sm_86", cascade.ArchFromMetadata,
			`metadata.json: trace_gpu_arch is "sm_86", but traces/kernel-1.trace: -binary version = 61 (sm_61): the simulator decodes the trace by its headers, as sm_61`},
		{"from the kernel header", `{"model": "vecAdd"}`, kernel, "sm_61", "traces/kernel-1.trace: -binary version = 61", ""},
		{"empty field", `{"trace_gpu_arch": ""}`, kernel, "sm_61", "traces/kernel-1.trace: -binary version = 61", ""},
		{"broken metadata.json", `{"model": `, kernel, "sm_61", "traces/kernel-1.trace: -binary version = 61", ""},
		{"nothing says", `{"model": "vecAdd"}`, "", cascade.DefaultTraceGPUArch, cascade.ArchAssumed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"metadata.json": c.meta, "traces/kernelslist": "kernel-1.trace\n"}
			if c.kernel != "" {
				files["traces/kernel-1.trace"] = c.kernel
			}
			for p, text := range files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tree, err := tracedir.Walk(dir)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := inspect(see(tree), history{}, time.Now(), testInterval)
			tr := cascade.Trace{ID: "t", State: cascade.TraceUploading}
			l.apply(&tr)
			if tr.TraceGPUArch != c.arch || tr.TraceGPUArchFrom != c.archFrm {
				t.Errorf("arch %q from %q, want %q from %q", tr.TraceGPUArch, tr.TraceGPUArchFrom, c.arch, c.archFrm)
			}
			if want := map[bool]string{true: "sm_61"}[c.kernel != ""]; tr.HeaderArch != want {
				t.Errorf("header arch %q, want %q", tr.HeaderArch, want)
			}
			var want []string
			if c.warning != "" {
				want = []string{c.warning}
			}
			if !slices.Equal(tr.ScanWarnings, want) {
				t.Errorf("warnings %q, want %q", tr.ScanWarnings, want)
			}
		})
	}
}
