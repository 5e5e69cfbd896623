package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// TestWrongFolderRefused: a trace's traces/ subfolder, and a folder of
// traces, were both uploaded and written a metadata.json, and failed on
// the server with a path and no hint. They are refused before a byte is
// sent, saying which folder to give; the trace itself still goes.
func TestWrongFolderRefused(t *testing.T) {
	root := t.TempDir()
	// Two traces shaped as the tracer writes them (the repository's
	// samples/quickstart, raw lists and kernel traces in traces/).
	sample := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	files := map[string]string{}
	entries, err := os.ReadDir(filepath.Join(sample, "traces"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(sample, "traces", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["traces/"+e.Name()] = string(data)
	}
	files["metadata.json"] = `{"model": "m"}`
	parent := filepath.Join(root, "all")
	for _, name := range []string{"llama-a", "llama-b"} {
		testkit.WriteTree(t, filepath.Join(parent, name), files)
	}
	one := filepath.Join(root, "one")
	testkit.WriteTree(t, filepath.Join(one, "only"), files)
	trace := filepath.Join(parent, "llama-a")

	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"traces subfolder", filepath.Join(trace, "traces"), []string{
			trace + "/traces is a trace's traces/ folder, nothing was sent",
			"give its parent", "cascade upload " + trace}},
		{"folder of traces", parent, []string{
			parent + " holds 2 traces, in its subfolders llama-a, llama-b, nothing was sent",
			"give one of them (cascade upload " + trace + "), or upload each"}},
		{"folder of one trace", one, []string{
			"holds a trace in its subfolder only, nothing was sent", "cascade upload " + filepath.Join(one, "only")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			_, err := Upload(context.Background(), Options{Source: c.src, Dest: dest})
			if err == nil {
				t.Fatal("uploaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to say %q", err, w)
				}
			}
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the destination was written: %v", err)
			}
		})
	}
	dest := filepath.Join(t.TempDir(), "dest")
	if _, err := Upload(context.Background(), Options{Source: trace, Dest: dest}); err != nil {
		t.Fatalf("the trace itself: %v", err)
	}
}
