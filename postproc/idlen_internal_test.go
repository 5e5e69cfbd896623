package postproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestLongestTraceIDNamesItsWorkFiles: the work files named after a trace
// (its log and marker) can be made for an id of cascade.MaxTraceIDLen
// bytes, which the S3 endpoint, cascade upload and the scanner allow.
func TestLongestTraceIDNamesItsWorkFiles(t *testing.T) {
	p := &Processor{cfg: Config{WorkDir: t.TempDir()}}
	if err := os.MkdirAll(filepath.Join(p.cfg.WorkDir, "postprocess"), 0o755); err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("x", cascade.MaxTraceIDLen)
	for _, path := range []string{p.LogPath(id), p.markerPath(id)} {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Errorf("a work file of the longest trace id: %v", err)
		}
	}
}
