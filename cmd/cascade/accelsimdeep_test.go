package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/accelsimtest"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestAccelSimDirTooDeep: CASCADE_ACCELSIM_DIR set to the checkout's
// gpu-simulator/ folder; serve's start report says which value to set.
func TestAccelSimDirTooDeep(t *testing.T) {
	checkout := accelsimtest.Write(t, t.TempDir(), fakesim.Version2)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CASCADE_") {
			t.Setenv(k, "")
		}
	}
	deep := filepath.Join(checkout, "gpu-simulator")
	t.Setenv("CASCADE_ACCELSIM_DIR", deep)
	cfg, _, _, err := parseServe(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Join(cfg.Report, "\n")
	want := "CASCADE_ACCELSIM_DIR=" + deep + " is too deep: set CASCADE_ACCELSIM_DIR=" + checkout + ", which looks like the checkout"
	if !strings.Contains(report, want) {
		t.Errorf("report:\n%s\nwant %q", report, want)
	}
}

// TestTraceFormatLine: the start line said "writes tracez (the default
// (Accel-Sim 2.0's))"; it says why in one clause, no parenthesis in a
// parenthesis.
func TestTraceFormatLine(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CASCADE_") {
			t.Setenv(k, "")
		}
	}
	for asked, want := range map[string]string{
		"":       "the built-in post-processor writes tracez: the default, what Accel-Sim 2.0 reads",
		"traceg": "the built-in post-processor writes traceg: as CASCADE_TRACE_FORMAT asks",
	} {
		t.Setenv("CASCADE_TRACE_FORMAT", asked)
		cfg, _, _, err := parseServe(nil, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if report := strings.Join(cfg.Report, "\n"); !strings.Contains(report, want) {
			t.Errorf("CASCADE_TRACE_FORMAT=%q: report\n%s\nwant %q", asked, report, want)
		}
	}
}
