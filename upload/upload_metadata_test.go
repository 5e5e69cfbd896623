package upload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracedir"
)

// TestUploadMetadataWithBOM: a source metadata.json with a byte order mark
// uploads, its run_name read, and the metadata.json written reads on the
// server with the same fields.
func TestUploadMetadataWithBOM(t *testing.T) {
	src, prefix := t.TempDir(), t.TempDir()
	testkit.WriteTree(t, src, map[string]string{
		"metadata.json":                 "\xef\xbb\xbf" + `{"run_name": "bom-run", "model": "llama"}` + "\n",
		"traces/kernel-1-ctx_0x1.trace": "abc",
		"traces/kernelslist_ctx_0x1":    "kernel-1-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":          "kernel id, ...\n",
	})
	res, err := Upload(context.Background(), Options{Source: src, PrefixDir: prefix})
	if err != nil {
		t.Fatalf("upload of a metadata.json with a BOM: %v", err)
	}
	if res.RunName != "bom-run" {
		t.Errorf("run name %q, want bom-run (metadata.json's run_name)", res.RunName)
	}
	m, err := tracedir.ReadMetadata(res.Dest)
	if err != nil || m.Model == nil || *m.Model != "llama" || len(m.Files) != 3 {
		t.Errorf("the uploaded metadata.json on the server: %+v, %v", m, err)
	}
}

// TestUploadRefusesWhatTheServerWould: a metadata.json value of the wrong
// type is refused before anything is copied, naming the field as the
// server would (it uploaded, then the trace failed on the server); a
// files list of another upload is no matter (the upload writes its own).
func TestUploadRefusesWhatTheServerWould(t *testing.T) {
	tree := map[string]string{
		"traces/kernel-1-ctx_0x1.trace": "abc",
		"traces/kernelslist_ctx_0x1":    "kernel-1-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":          "kernel id, ...\n",
	}
	src, prefix := t.TempDir(), t.TempDir()
	tree["metadata.json"] = `{"run_name": "typed", "model": 5}` + "\n"
	testkit.WriteTree(t, src, tree)
	_, err := Upload(context.Background(), Options{Source: src, PrefixDir: prefix})
	if want := "model: want a string, got number"; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(src, "metadata.json")) {
		t.Fatalf("upload of \"model\": 5: %v, want it to name the file and say %q", err, want)
	}
	if entries, _ := os.ReadDir(prefix); len(entries) != 0 {
		t.Errorf("copied %d entries before refusing", len(entries))
	}
	src2 := t.TempDir()
	tree["metadata.json"] = `{"run_name": "relisted", "model": "m", "files": [{"path": "gone", "size": -1}]}` + "\n"
	testkit.WriteTree(t, src2, tree)
	if _, err := Upload(context.Background(), Options{Source: src2, PrefixDir: prefix}); err != nil {
		t.Errorf("upload with another upload's files list: %v", err)
	}
}
