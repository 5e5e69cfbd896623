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
